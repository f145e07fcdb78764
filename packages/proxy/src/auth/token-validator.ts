import { MAX_TOKEN_LENGTH } from '@flags/schemas';
import type { Logger } from '../config/options.js';
import type { UpstreamClient } from '../sync/http-client.js';
import { sameProjects, type TokenInfo, tokenType } from './unleash-token.js';

/** What the validator knows of a token: confirmed, refused, or not (yet) known. */
export type TokenStatus = TokenInfo | 'invalid' | 'unknown';

/** A token's entry as saved with the backup and listed by `/internal-backstage/tokens`. */
export interface TokenRecord {
  readonly token: string;
  readonly status: 'valid' | 'invalid';
  readonly info?: TokenInfo;
  /** Epoch ms of the upstream answer this record comes from. */
  readonly checkedAt: number;
}

export interface TokenValidatorOptions {
  readonly upstream: UpstreamClient;
  /** `{upstream root}/edge/validate`. */
  readonly url: URL;
  /** Identification headers (no `Authorization`: the endpoint takes none). */
  readonly headers: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
  readonly log: Logger;
  /** Tokens sent in one call at most. */
  readonly maxBatch?: number;
  /** Least time between two validation calls, ms: a flood of made-up tokens cannot flood the upstream. */
  readonly minCallSpacingMs?: number;
  /** Unknown tokens waiting for a call at most; beyond, a new token is answered `unknown` at once. */
  readonly maxQueued?: number;
  /** Refused tokens remembered at most (the oldest are forgotten first). */
  readonly maxInvalid?: number;
  readonly now?: () => number;
}

/**
 * How one `/edge/validate` call went: answered (the records are updated), `refused` (a 4xx about
 * the body: some token in it the upstream will not take), or `failed` (anything else).
 */
type CallOutcome = 'answered' | 'refused' | 'failed';

/**
 * Answers meaning the upstream refused the body (flags-server answered 400 to a batch holding one
 * token over 512 characters): worth splitting. Others (401/403/404/429, 5xx) are not about which
 * tokens were asked, so a smaller batch would fare no better.
 */
const REFUSED_BODY = new Set([400, 413, 422]);

interface Waiting {
  readonly promise: Promise<TokenStatus>;
  resolve(status: TokenStatus): void;
}

/**
 * Tokens validated by the upstream (`POST /edge/validate {"tokens": [...]}`, no auth; a token absent
 * from the answer is invalid), as Unleash Edge does. Lookups of known tokens are synchronous: the
 * hot path pays a Map lookup (a hash, so its time does not depend on how much of a secret matches).
 * Unknown tokens are queued and sent in batches, one call at a time and at least
 * `minCallSpacingMs` apart, so concurrent first requests with one token make one call and random
 * tokens make a bounded number; refused tokens are remembered (bounded) so they cost nothing
 * the second time. `revalidate()` asks again for every confirmed token: one revoked upstream is
 * dropped then. A token longer than any issued (`MAX_TOKEN_LENGTH`) is refused at once and never
 * asked about; a batch the upstream refuses as a whole is split in halves and asked again (within
 * a bounded number of calls), so one token it will not take cannot fail the others (issue #40).
 */
export class TokenValidator {
  private readonly valid = new Map<string, TokenRecord>();
  /** Insertion-ordered, so the oldest refusal is the first forgotten. */
  private readonly invalid = new Map<string, number>();
  private readonly queue = new Map<string, Waiting>();
  private calling: Promise<void> | undefined;
  private lastCallAt = Number.NEGATIVE_INFINITY;
  private readonly maxBatch: number;
  private readonly spacingMs: number;
  private readonly maxQueued: number;
  private readonly maxInvalid: number;
  private readonly now: () => number;
  private readonly listeners: Array<() => void> = [];
  private warned: string | undefined;
  private closed = false;
  /** Validation calls made, for tests, logs and Prometheus. */
  calls = 0;

  constructor(private readonly options: TokenValidatorOptions) {
    this.maxBatch = options.maxBatch ?? 200;
    this.spacingMs = options.minCallSpacingMs ?? 100;
    this.maxQueued = options.maxQueued ?? 1000;
    this.maxInvalid = options.maxInvalid ?? 10_000;
    this.now = options.now ?? Date.now;
  }

  /** What is known of `token` without asking anyone. */
  known(token: string): TokenStatus {
    const record = this.valid.get(token);
    if (record !== undefined) return record.info as TokenInfo;
    return this.invalid.has(token) ? 'invalid' : 'unknown';
  }

  /** `known(token)`, asking the upstream when nothing is known (`unknown` when it cannot answer now). */
  validate(token: string): TokenStatus | Promise<TokenStatus> {
    // No issued token is this long: refused without a lookup, a call or a place in the bounded
    // list of refusals (a flood of them would push real refusals out).
    if (token.length > MAX_TOKEN_LENGTH) return 'invalid';
    const status = this.known(token);
    if (status !== 'unknown' || this.closed) return status;
    const waiting = this.queue.get(token);
    if (waiting !== undefined) return waiting.promise;
    if (this.queue.size >= this.maxQueued) return 'unknown';
    let resolve!: (status: TokenStatus) => void;
    const promise = new Promise<TokenStatus>((done) => {
      resolve = done;
    });
    this.queue.set(token, { promise, resolve });
    this.schedule();
    return promise;
  }

  /** Called after every change of the confirmed set (backup, environments). */
  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  /** Every record, confirmed first (for the backup and `/internal-backstage/tokens`). */
  records(): TokenRecord[] {
    const invalid = [...this.invalid].map(
      ([token, checkedAt]): TokenRecord => ({ token, status: 'invalid', checkedAt }),
    );
    return [...this.valid.values(), ...invalid];
  }

  /** Counts by status, for Prometheus. */
  counts(): { valid: number; invalid: number; pending: number } {
    return { valid: this.valid.size, invalid: this.invalid.size, pending: this.queue.size };
  }

  /** Takes records saved earlier (a restart while the upstream is down); what is known wins. */
  restore(records: readonly TokenRecord[]): void {
    let changed = false;
    for (const record of records) {
      if (this.valid.has(record.token) || this.invalid.has(record.token)) continue;
      if (record.status === 'valid' && record.info !== undefined) {
        this.valid.set(record.token, record);
        changed = true;
      } else if (record.status === 'invalid') this.remember(record.token, record.checkedAt);
    }
    if (changed) this.changed();
  }

  /**
   * Asks the upstream again about every confirmed token (and forgets refusals, which may have been
   * created since). A token the upstream no longer confirms is refused from now on; one it cannot
   * answer about keeps its last status.
   */
  async revalidate(): Promise<void> {
    const tokens = [...this.valid.keys()];
    this.invalid.clear();
    for (let start = 0; start < tokens.length && !this.closed; start += this.maxBatch) {
      await this.wait(this.calling);
      await this.spacing();
      await this.ask(tokens.slice(start, start + this.maxBatch));
    }
  }

  /** Answers every queued token `unknown` and makes no further calls. */
  close(): void {
    this.closed = true;
    for (const waiting of this.queue.values()) waiting.resolve('unknown');
    this.queue.clear();
  }

  private schedule(): void {
    if (this.calling !== undefined) return;
    this.calling = this.drain().finally(() => {
      this.calling = undefined;
      if (this.queue.size > 0 && !this.closed) this.schedule();
    });
  }

  /** One call with the tokens queued so far (after the spacing, so more can join the batch). */
  private async drain(): Promise<void> {
    await this.spacing();
    if (this.closed) return;
    const batch = [...this.queue.keys()].slice(0, this.maxBatch);
    const answered = await this.ask(batch);
    for (const token of batch) {
      const waiting = this.queue.get(token);
      this.queue.delete(token);
      waiting?.resolve(answered.has(token) ? this.known(token) : 'unknown');
    }
  }

  /**
   * Asks about `tokens`, splitting a batch the upstream refuses in halves and asking again, down
   * to single tokens (a token refused alone is remembered as refused). Returns the tokens the
   * upstream answered about. Splitting stops at a failure (5xx, network: the rest stay unchecked,
   * as without splitting) and after `4⌈log2 n⌉` more calls for a batch of n: enough to single out
   * two refused tokens, so a batch full of them costs the upstream little; the tokens not reached
   * stay unchecked, never refused.
   */
  private async ask(tokens: readonly string[]): Promise<Set<string>> {
    const answered = new Set<string>();
    const first = await this.call(tokens);
    if (first === 'answered') for (const token of tokens) answered.add(token);
    if (first !== 'refused') return answered;
    let budget = 4 * Math.ceil(Math.log2(tokens.length));
    const pieces: Array<readonly string[]> = [tokens];
    while (pieces.length > 0 && !this.closed) {
      const piece = pieces.pop() as readonly string[];
      const [only] = piece;
      if (piece.length === 1 && only !== undefined) {
        this.refuse(only);
        answered.add(only);
        continue;
      }
      const middle = Math.ceil(piece.length / 2);
      // Both halves are asked; a refused one is split in its turn (depth first).
      for (const half of [piece.slice(middle), piece.slice(0, middle)]) {
        if (budget === 0) return answered;
        budget--;
        await this.spacing();
        if (this.closed) return answered;
        const outcome = await this.call(half);
        if (outcome === 'failed') return answered;
        if (outcome === 'answered') for (const token of half) answered.add(token);
        else pieces.push(half);
      }
    }
    return answered;
  }

  private async spacing(): Promise<void> {
    const wait = this.lastCallAt + this.spacingMs - this.now();
    // A short pause even when no spacing is due lets concurrent first requests share the call.
    await new Promise((resolve) => setTimeout(resolve, Math.max(wait, 1)).unref());
  }

  private async wait(running: Promise<void> | undefined): Promise<void> {
    if (running !== undefined) await running;
  }

  /** One `POST /edge/validate`; when `answered`, the records are updated. */
  private async call(tokens: readonly string[]): Promise<CallOutcome> {
    if (tokens.length === 0) return 'answered';
    this.lastCallAt = this.now();
    this.calls++;
    const { upstream, url, headers, timeoutMs, log } = this.options;
    try {
      const response = await upstream.request(url, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify({ tokens }),
        timeoutMs,
      });
      if (REFUSED_BODY.has(response.status)) {
        await response.dump();
        log.debug({}, `upstream refused a validation batch of ${tokens.length} tokens`);
        return 'refused';
      }
      if (response.status !== 200) {
        await response.dump();
        this.warnOnce(
          `upstream answered ${response.status} to token validation (${url.href}); tokens it has not confirmed before are refused with 401 until it answers`,
        );
        return 'failed';
      }
      const confirmed = confirmedTokens(await response.text());
      if (confirmed === undefined) {
        this.warnOnce(
          `upstream sent a token validation answer this proxy cannot read (${url.href})`,
        );
        return 'failed';
      }
      this.warned = undefined;
      this.apply(tokens, confirmed);
      return 'answered';
    } catch (error) {
      this.warnOnce(
        `token validation failed (${url.href}): ${error instanceof Error ? error.message : String(error)}`,
      );
      log.debug({}, 'token validation request failed');
      return 'failed';
    }
  }

  private apply(asked: readonly string[], confirmed: ReadonlyMap<string, TokenInfo>): void {
    const checkedAt = this.now();
    let changed = false;
    for (const token of asked) {
      const info = confirmed.get(token);
      if (info === undefined) {
        if (this.valid.delete(token)) changed = true;
        this.remember(token, checkedAt);
      } else {
        this.invalid.delete(token);
        const before = this.valid.get(token)?.info;
        this.valid.set(token, { token, status: 'valid', info, checkedAt });
        if (before === undefined || !sameInfo(before, info)) changed = true;
      }
    }
    if (changed) this.changed();
  }

  /** A token the upstream refused to be asked about (alone): refused from now on. */
  private refuse(token: string): void {
    if (this.valid.delete(token)) this.changed();
    this.remember(token, this.now());
  }

  private remember(token: string, checkedAt: number): void {
    this.invalid.delete(token);
    this.invalid.set(token, checkedAt);
    if (this.invalid.size > this.maxInvalid) {
      const oldest = this.invalid.keys().next().value as string;
      this.invalid.delete(oldest);
    }
  }

  private changed(): void {
    for (const listener of this.listeners) listener();
  }

  private warnOnce(message: string): void {
    if (this.warned === message) return;
    this.warned = message;
    this.options.log.warn({}, message);
  }
}

function sameInfo(a: TokenInfo, b: TokenInfo): boolean {
  return (
    a.type === b.type && a.environment === b.environment && sameProjects(a.projects, b.projects)
  );
}

/**
 * The usable tokens of an `/edge/validate` answer `{"tokens": [{token, type, environment, projects}]}`
 * (admin tokens and malformed entries are left out: refused), or `undefined` when it is not one.
 */
export function confirmedTokens(text: string): Map<string, TokenInfo> | undefined {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return undefined;
  }
  const entries = (body as { tokens?: unknown } | null)?.tokens;
  if (!Array.isArray(entries)) return undefined;
  const confirmed = new Map<string, TokenInfo>();
  for (const entry of entries as unknown[]) {
    if (entry === null || typeof entry !== 'object') continue;
    const { token, type, environment, projects } = entry as Record<string, unknown>;
    const kind = tokenType(type);
    if (typeof token !== 'string' || kind === undefined || typeof environment !== 'string')
      continue;
    const names = Array.isArray(projects)
      ? projects.filter((project): project is string => typeof project === 'string')
      : typeof projects === 'string'
        ? [projects]
        : [];
    if (names.length === 0 || environment === '' || environment === '*') continue;
    confirmed.set(
      token,
      Object.freeze({ token, type: kind, environment, projects: Object.freeze([...names].sort()) }),
    );
  }
  return confirmed;
}
