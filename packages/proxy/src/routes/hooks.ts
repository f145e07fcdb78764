import type { Context } from '@flags/schemas';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { KeyChecker } from '../auth/client-keys.js';
import type { ContextEnricher, Logger } from '../config/options.js';
import { ProxyError } from '../errors.js';

/** Readiness is checked before auth, auth before input (unlike Unleash Proxy, which validates first). */
export function requireKey(checker: KeyChecker, headerName: string) {
  return function checkClientKey(
    request: FastifyRequest,
    reply: FastifyReply,
    done: () => void,
  ): void {
    if (checker.accepts(request.headers[headerName])) {
      done();
      return;
    }
    void reply.code(401).type('text/plain; charset=utf-8').send('Unauthorized');
  };
}

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
        throw new ProxyError('ENRICHER_FAILED', [`enricher #${i + 1} failed`]);
      }
    }
    return current;
  }
}
