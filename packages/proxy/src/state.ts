import { hostname } from 'node:os';
import { type CompileOptions, compile, type Evaluation, type Snapshot } from '@flags/engine';
import type { ClientFeatures } from '@flags/schemas';
import { AnswerCache } from './answers.js';
import type { EvaluationCounter } from './usage/aggregator.js';

/** One result's serialized JSON and a small id that stands for it in ETags. */
export interface Fragment {
  readonly json: string;
  /** `json` as UTF-8: bodies are copied together from bytes, nothing is encoded per request. */
  readonly bytes: Buffer;
  readonly id: number;
}

let nextFragmentId = 1;

/**
 * A compiled upstream payload plus what is derived from it once (habit 9): the JSON fragment of
 * every interned engine result, built the first time the result is served and reused after.
 */
export class CompiledState {
  private readonly fragments = new Map<Evaluation, Fragment>();
  /**
   * Per flag position, the results seen so far and their fragments side by side: a flag has only a
   * few interned results, so a short scan of one small array finds the fragment without hashing
   * into the Map (which, on a busy server, costs cache misses on every flag).
   */
  private readonly seen: Array<Array<Evaluation | Fragment> | undefined> = [];
  private clientFeaturesBody: string | undefined;
  /** Counts the results of `snapshot.evaluateEach` when usage metrics are on. */
  usage: EvaluationCounter | undefined;

  /** Answers by context for this snapshot; `undefined` when the cache is off. */
  readonly answers: AnswerCache | undefined;

  constructor(
    readonly snapshot: Snapshot,
    readonly receivedAt: number,
    answerCacheBytes = 0,
  ) {
    this.answers = answerCacheBytes > 0 ? new AnswerCache(answerCacheBytes) : undefined;
  }

  get payload(): ClientFeatures {
    return this.snapshot.payload;
  }

  /** The toggle JSON of one result (`reason` is internal and not sent). */
  fragment(result: Evaluation): Fragment {
    let fragment = this.fragments.get(result);
    if (fragment === undefined) {
      const json = toggleJson(result);
      fragment = { json, bytes: Buffer.from(json, 'utf8'), id: nextFragmentId++ };
      this.fragments.set(result, fragment);
    }
    return fragment;
  }

  /** `fragment(result)` for the result of the flag at position `index` of `snapshot.names`. */
  fragmentAt(index: number, result: Evaluation): Fragment {
    let seen = this.seen[index];
    if (seen !== undefined) {
      for (let i = 0; i < seen.length; i += 2) {
        if (seen[i] === result) return seen[i + 1] as Fragment;
      }
    } else {
      seen = [];
      this.seen[index] = seen;
    }
    const fragment = this.fragment(result);
    seen.push(result, fragment);
    return fragment;
  }

  /** `{version, features, segments}` as synced, serialized once (for `/proxy/client/features`). */
  clientFeaturesJson(): string {
    this.clientFeaturesBody ??= JSON.stringify({
      version: this.payload.version,
      features: this.payload.features,
      ...(this.payload.segments === undefined ? {} : { segments: this.payload.segments }),
    });
    return this.clientFeaturesBody;
  }
}

export function toggleJson(result: Evaluation): string {
  return JSON.stringify({
    name: result.name,
    enabled: result.enabled,
    variant: result.variant,
    impressionData: result.impressionData,
  });
}

export type StateListener = (state: CompiledState) => void;

/**
 * The proxy's current compiled snapshot. The sync loop is its only writer; request handlers only
 * read `current` (habit 8). Not ready until the first payload arrives.
 */
export class ProxyState {
  private compiled: CompiledState | undefined;
  /** Epoch ms of the last payload change and of the last successful upstream check. */
  lastUpdateMs = 0;
  lastFetchMs = 0;
  private readonly listeners: StateListener[] = [];

  /**
   * `answerCacheBytes`: memory for the answers each snapshot keeps by context (0: none). Only for
   * contexts that are the whole input of evaluation, i.e. not rewritten by enrichers.
   */
  constructor(
    private readonly compileOptions: CompileOptions = {},
    private readonly answerCacheBytes = 0,
  ) {}

  get ready(): boolean {
    return this.compiled !== undefined;
  }

  get current(): CompiledState | undefined {
    return this.compiled;
  }

  /** Compiles and swaps in a new payload; returns the new state. */
  update(payload: ClientFeatures, now = Date.now()): CompiledState {
    const snapshot = compile(payload, { hostname: hostname(), ...this.compileOptions });
    this.compiled = new CompiledState(snapshot, now, this.answerCacheBytes);
    this.lastUpdateMs = now;
    this.lastFetchMs = now;
    for (const listener of this.listeners) listener(this.compiled);
    return this.compiled;
  }

  /** An upstream check that changed nothing (304). */
  touch(now = Date.now()): void {
    this.lastFetchMs = now;
  }

  onUpdate(listener: StateListener): void {
    this.listeners.push(listener);
  }
}
