import { hostname } from 'node:os';
import {
  type CompileOptions,
  compile,
  type Evaluation,
  type EvaluationVisitor,
  type Snapshot,
} from '@flags/engine';
import type { ClientFeatures, Context } from '@flags/schemas';
import { type Answer, AnswerCache } from './answers.js';
import { type ResultTag, resultTag } from './http/conditional.js';

/** One result's serialized JSON, as text and as UTF-8, and the tag that stands for it in ETags. */
export interface Fragment extends ResultTag {
  readonly json: string;
  readonly bytes: Buffer;
  /** The fragment's number in its `CompiledState` (0, 1, 2… in the order made). */
  readonly serial: number;
}

/**
 * Counts the results of one snapshot (flags-proxy's `UsageAggregator.track` makes one per
 * snapshot); its `CompiledState` counts into it while it evaluates.
 */
export interface EvaluationCounter {
  /** Set by whoever counts; cleared when the counts are collected. */
  dirty: boolean;
  /** Counts one result of the flag at position `index` (the caller sets `dirty`, once per walk). */
  count(index: number, result: Evaluation): void;
  /** Counts the result of the flag named `name`, or a name the snapshot does not know; marks dirty. */
  countNamed(name: string, result: Evaluation | undefined): void;
  /** Counts every result of an answer sent again (by flag position), in O(1) now; marks dirty. */
  countAgain(results: readonly Evaluation[]): void;
  /**
   * The snapshot is no longer served (its state swapped it out): its counts are collected once
   * more, and it is forgotten once a collection finds it idle.
   */
  release(): void;
}

/** Where usage counting starts for each new snapshot (`UsageAggregator`). */
export interface UsageCounting {
  /**
   * A counter for `snapshot`'s evaluations (`scoped`: narrowed to a token's projects); the
   * snapshot itself is left as it is.
   */
  track(snapshot: Snapshot, scoped: boolean): EvaluationCounter;
}

/** What a `CompiledState` is built with besides its snapshot. */
export interface CompiledStateOptions {
  /** Memory for the answers kept by context (0: none). */
  readonly answerCacheBytes?: number;
  /** Counts every evaluation (usage metrics on); `undefined`: nothing is counted. */
  readonly usage?: EvaluationCounter;
}

/** Hands `visitor` every result and counts each for usage metrics, in the one walk over the flags. */
class CountingVisitor implements EvaluationVisitor {
  constructor(
    private readonly usage: EvaluationCounter,
    private readonly visitor: EvaluationVisitor,
  ) {}

  visit(index: number, result: Evaluation): void {
    this.usage.count(index, result);
    this.visitor.visit(index, result);
  }
}

/**
 * A compiled upstream payload plus what is derived from it once: the JSON fragment of every
 * interned engine result (built the first time the result is served and reused after), the
 * answers kept by context, and the usage counter. Handlers evaluate through it, never through the
 * snapshot directly, so that every evaluation is counted while the engine's snapshot stays as the
 * engine made it.
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
  private nameOrderOf: Uint32Array | undefined;
  /** Counts the evaluations of this snapshot when usage metrics are on. */
  private readonly usage: EvaluationCounter | undefined;

  /** Answers by context for this snapshot; `undefined` when the cache is off. */
  readonly answers: AnswerCache | undefined;

  constructor(
    readonly snapshot: Snapshot,
    readonly receivedAt: number,
    options: CompiledStateOptions = {},
  ) {
    const answerCacheBytes = options.answerCacheBytes ?? 0;
    this.answers = answerCacheBytes > 0 ? new AnswerCache(answerCacheBytes) : undefined;
    this.usage = options.usage;
  }

  get payload(): ClientFeatures {
    return this.snapshot.payload;
  }

  /** One flag, counted; `undefined` (counted as a miss) when the snapshot has no such flag. */
  evaluate(name: string, context: Context): Evaluation | undefined {
    const result = this.snapshot.evaluate(name, context);
    this.usage?.countNamed(name, result);
    return result;
  }

  /** Every flag in payload order, counted. */
  evaluateAll(context: Context): Evaluation[] {
    const results = this.snapshot.evaluateAll(context);
    const usage = this.usage;
    if (usage !== undefined) {
      usage.dirty = true;
      for (let i = 0; i < results.length; i++) usage.count(i, results[i] as Evaluation);
    }
    return results;
  }

  /**
   * Every flag to `visitor` (see `Snapshot.evaluateEach`), each counted as it is visited: the
   * results are walked once, not collected and walked again.
   */
  evaluateEach(context: Context, visitor: EvaluationVisitor): number {
    const usage = this.usage;
    if (usage === undefined) return this.snapshot.evaluateEach(context, visitor);
    usage.dirty = true;
    return this.snapshot.evaluateEach(context, new CountingVisitor(usage, visitor));
  }

  /**
   * The answer kept under `key`, counted for usage metrics as if evaluated again; `undefined` when
   * there is none (or no key: the cache is off).
   */
  keptAnswer(key: string | undefined): Answer | undefined {
    const kept = key === undefined ? undefined : this.answers?.get(key);
    if (kept !== undefined) this.usage?.countAgain(kept.results);
    return kept;
  }

  /**
   * No longer served: a newer snapshot replaced it. Requests still holding it may finish; its
   * usage counts are collected a last time.
   */
  release(): void {
    this.usage?.release();
  }

  /** The toggle JSON of one result (`reason` is internal and not sent). */
  fragment(result: Evaluation): Fragment {
    let fragment = this.fragments.get(result);
    if (fragment === undefined) {
      const json = toggleJson(result);
      const serial = this.fragments.size;
      fragment = { json, bytes: Buffer.from(json, 'utf8'), ...resultTag(json), serial };
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

  /**
   * Flag positions in name order: the `/api` answers list toggles by name, as Unleash Edge and
   * unleash-server do, whatever order the upstream sent (`/proxy` keeps the upstream's order).
   */
  nameOrder(): Uint32Array {
    if (this.nameOrderOf === undefined) {
      const names = this.snapshot.names;
      const order = Uint32Array.from(names.keys());
      order.sort((a, b) => {
        const x = names[a] as string;
        const y = names[b] as string;
        return x < y ? -1 : x > y ? 1 : 0;
      });
      this.nameOrderOf = order;
    }
    return this.nameOrderOf;
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

/** Project sets compiled at once per environment at most (tokens rarely differ in more). */
const MAX_SCOPES = 64;

export type StateListener = (state: CompiledState) => void;

export interface EnvironmentStateOptions {
  readonly compile?: CompileOptions;
  /**
   * Memory for the answers each snapshot keeps by context (0: none). Only for contexts that are
   * the whole input of evaluation, i.e. not rewritten by enrichers.
   */
  readonly answerCacheBytes?: number;
  /** Counts the evaluations of every snapshot (usage metrics on). */
  readonly usage?: UsageCounting;
}

/**
 * One environment's current compiled snapshot. Its feed (flags-proxy's sync loop, with the backup
 * and bootstrap before the first sync; flags-server's store) is its only writer, and swaps in a
 * whole new snapshot; request handlers only read `current`, so a request sees one snapshot from
 * start to end. Not ready until the first payload arrives.
 */
export class EnvironmentState {
  private compiled: CompiledState | undefined;
  /** `forProjects` answers for the current payload, by project set. */
  private readonly scopes = new Map<string, CompiledState>();
  /** Epoch ms of the last payload change. */
  lastUpdateMs = 0;
  private readonly listeners: StateListener[] = [];

  constructor(private readonly options: EnvironmentStateOptions = {}) {}

  get ready(): boolean {
    return this.compiled !== undefined;
  }

  get current(): CompiledState | undefined {
    return this.compiled;
  }

  /**
   * The current snapshot, for request handlers: the readiness hook answers 503 until there is one,
   * so a handler never runs without it.
   */
  serving(): CompiledState {
    const compiled = this.compiled;
    if (compiled === undefined)
      throw new Error('no snapshot yet: the readiness hook must run first');
    return compiled;
  }

  /** Compiles and swaps in a new payload; returns the new state. */
  update(payload: ClientFeatures, now = Date.now()): CompiledState {
    const replaced = this.compiled;
    this.compiled = this.compileState(payload, now, false);
    replaced?.release();
    for (const scoped of this.scopes.values()) scoped.release();
    this.scopes.clear();
    this.lastUpdateMs = now;
    for (const listener of this.listeners) listener(this.compiled);
    return this.compiled;
  }

  /**
   * The current snapshot narrowed to `projects` (a token's), compiled once per payload and set of
   * projects: its answers, ETags, answer cache and usage counts are its own. `['*']`: `current`.
   * Flags depend only on flags of their own project (Unleash's rule), so narrowing before
   * evaluation answers as evaluating everything and filtering after would.
   */
  forProjects(projects: readonly string[]): CompiledState | undefined {
    const compiled = this.compiled;
    if (compiled === undefined || projects.includes('*')) return compiled;
    const key = projects.join('\u0000');
    let scoped = this.scopes.get(key);
    if (scoped === undefined) {
      const wanted = new Set(projects);
      const payload = compiled.payload;
      scoped = this.compileState(
        {
          ...payload,
          features: payload.features.filter((feature) => wanted.has(feature.project ?? 'default')),
        },
        compiled.receivedAt,
        true,
      );
      // A bounded number of project sets is kept; beyond it the oldest is compiled again if asked.
      if (this.scopes.size >= MAX_SCOPES) {
        const [oldestKey, oldest] = this.scopes.entries().next().value as [string, CompiledState];
        this.scopes.delete(oldestKey);
        oldest.release();
      }
      this.scopes.set(key, scoped);
    }
    return scoped;
  }

  private compileState(
    payload: ClientFeatures,
    receivedAt: number,
    scoped: boolean,
  ): CompiledState {
    const snapshot = compile(payload, { hostname: hostname(), ...this.options.compile });
    return new CompiledState(snapshot, receivedAt, {
      answerCacheBytes: this.options.answerCacheBytes,
      // Counting starts before any request can see the snapshot.
      usage: this.options.usage?.track(snapshot, scoped),
    });
  }

  onUpdate(listener: StateListener): void {
    this.listeners.push(listener);
  }
}
