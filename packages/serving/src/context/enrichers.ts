import type { Context } from '@flags/schemas';
import { servingError } from '../errors.js';
import type { Logger } from '../logger.js';

/** Receives the evaluation context and returns the one to evaluate (in order, after parsing). */
export type ContextEnricher = (context: Context) => Context | Promise<Context>;

/** Applies the configured enrichers in order; returns the context unchanged (and synchronously) without any. */
export class Enrichers {
  private readonly failed = new Set<number>();

  constructor(
    private readonly enrichers: readonly ContextEnricher[],
    private readonly log: Logger,
  ) {}

  get empty(): boolean {
    return this.enrichers.length === 0;
  }

  async apply(context: Context): Promise<Context> {
    let current = context;
    for (let i = 0; i < this.enrichers.length; i++) {
      try {
        const next = await (this.enrichers[i] as ContextEnricher)(current);
        if (next === null || typeof next !== 'object')
          throw new TypeError('the enricher did not return a context object');
        current = next;
      } catch (error) {
        // Logged once per enricher; every request it breaks gets a 500 JSON error.
        if (!this.failed.has(i)) {
          this.failed.add(i);
          this.log.error(
            { err: error instanceof Error ? error.message : String(error), enricher: i },
            'custom context enricher failed',
          );
        }
        throw servingError('ENRICHER_FAILED', [`enricher #${i + 1} failed`]);
      }
    }
    return current;
  }
}
