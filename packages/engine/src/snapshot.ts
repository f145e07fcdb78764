import type { ClientFeatures } from '@flags/schemas';
import { SharedChecks } from './compile/checks.js';
import { linkDependencies, type Requirement } from './compile/dependency.js';
import { EvaluationState } from './compile/evaluation-state.js';
import {
  type CompiledFlag,
  compileFeature,
  runFlag,
  type SharedEnvironment,
} from './compile/feature.js';
import { ResultMemo } from './compile/memo.js';
import { flagReads, rawSegments } from './compile/reads.js';
import { compileSegments } from './compile/segment.js';
import {
  type CompileOptions,
  type Context,
  type CustomStrategy,
  DEFAULT_MAX_CONTEXT_VALUE_LENGTH,
  type Evaluation,
  type EvaluationVisitor,
  type Snapshot,
} from './types.js';

interface Entry {
  readonly flag: CompiledFlag;
  readonly requirements: readonly Requirement[] | undefined;
}

/** A flag with its parents checked first (unless its answer is fixed anyway). */
function evaluateEntry(entry: Entry, context: Context): Evaluation {
  const { flag, requirements } = entry;
  if (flag.constant !== undefined) return flag.constant;
  if (requirements !== undefined) {
    for (let i = 0; i < requirements.length; i++) {
      if (!requirements[i]!(context)) return flag.results.disabled;
    }
  }
  return runFlag(flag, context);
}

class CompiledSnapshot implements Snapshot {
  readonly names: readonly string[];
  memoHits = 0;
  private readonly entries: readonly Entry[];
  private readonly byName: ReadonlyMap<string, Entry>;

  constructor(
    readonly payload: ClientFeatures,
    entries: readonly Entry[],
    private readonly evaluation: EvaluationState,
    private readonly memo: ResultMemo | undefined,
  ) {
    this.entries = entries;
    this.names = Object.freeze(entries.map((entry) => entry.flag.name));
    this.byName = new Map(entries.map((entry) => [entry.flag.name, entry]));
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  evaluate(name: string, context: Context, now?: number): Evaluation | undefined {
    const entry = this.byName.get(name);
    if (entry === undefined) return undefined;
    const evaluation = this.evaluation;
    evaluation.begin(now);
    try {
      return run(entry, context);
    } finally {
      evaluation.end();
    }
  }

  evaluateAll(context: Context, now?: number): Evaluation[] {
    const entries = this.entries;
    const out = new Array<Evaluation>(entries.length);
    const evaluation = this.evaluation;
    evaluation.begin(now);
    // One guard for the whole loop (the common case); flag by flag only if something threw.
    try {
      for (let i = 0; i < entries.length; i++) out[i] = evaluateEntry(entries[i]!, context);
    } catch {
      for (let i = 0; i < entries.length; i++) out[i] = run(entries[i]!, context);
    } finally {
      evaluation.end();
    }
    return out;
  }

  evaluateEach(context: Context, visitor: EvaluationVisitor, now?: number): number {
    const entries = this.entries;
    const evaluation = this.evaluation;
    evaluation.begin(now);
    try {
      const memo = this.memo;
      const found = memo !== undefined && evaluation.outermost ? memo.find(context) : 'skip';
      if (found !== 'skip') return this.evaluateKept(memo as ResultMemo, found, context, visitor);
      for (let i = 0; i < entries.length; i++) visitor.visit(i, run(entries[i]!, context));
      return evaluation.stableUntil;
    } finally {
      evaluation.end();
    }
  }

  /**
   * `evaluateEach` with the memo: the kept flags' results from it when it has them (`found`), else
   * evaluated and kept (`record`, unless one of them drew at random).
   */
  private evaluateKept(
    memo: ResultMemo,
    found: 'found' | 'record',
    context: Context,
    visitor: EvaluationVisitor,
  ): number {
    const entries = this.entries;
    const evaluation = this.evaluation;
    const kept = memo.kept;
    if (found === 'found') {
      this.memoHits++;
      const { words, shifts, masks, scratch, outcomes } = memo;
      for (let i = 0, k = 0; i < entries.length; i++) {
        if (kept[i] === 1) {
          const code = (scratch[words[k]!]! >>> shifts[k]!) & masks[k]!;
          k++;
          visitor.visit(i, outcomes[i]![code]!);
        } else visitor.visit(i, run(entries[i]!, context));
      }
    } else {
      let keep = true;
      for (let i = 0, k = 0; i < entries.length; i++) {
        if (kept[i] === 1) {
          const stableUntil = evaluation.stableUntil;
          const result = run(entries[i]!, context);
          // A stickiness field the context lacks makes a random pick: not the key's result.
          if (evaluation.stableUntil !== stableUntil || !memo.record(k++, i, result)) keep = false;
          visitor.visit(i, result);
        } else visitor.visit(i, run(entries[i]!, context));
      }
      if (keep) memo.store();
    }
    return evaluation.stableUntil;
  }
}

/** Evaluation never throws: an odd context (or a bug) yields the flag's ERROR answer. */
function run(entry: Entry, context: Context): Evaluation {
  try {
    return evaluateEntry(entry, context);
  } catch {
    return entry.flag.results.error;
  }
}

/** The random source, marking each evaluation that draws from it (see `evaluateEach`). */
function drawsThatVary(random: () => number, evaluation: EvaluationState): () => number {
  return () => {
    evaluation.markVaries();
    return random();
  };
}

function customStrategies(options: CompileOptions): Map<string, CustomStrategy> {
  const custom = new Map<string, CustomStrategy>();
  for (const strategy of options.strategies ?? []) {
    if (typeof strategy?.name !== 'string' || typeof strategy.isEnabled !== 'function') {
      options.onWarning?.({ message: 'custom strategy without a name or isEnabled() is ignored' });
      continue;
    }
    custom.set(strategy.name, strategy);
  }
  return custom;
}

/** The memo of a snapshot's flags whose results are kept by the fields they read (`flagReads`). */
function memoOf(
  payload: ClientFeatures,
  entries: readonly Entry[],
  raws: ReadonlyMap<string, unknown>,
  shared: SharedEnvironment,
  budgetBytes: number,
): ResultMemo | undefined {
  const segments = rawSegments(payload);
  const custom = new Set(shared.custom.keys());
  const fields = new Set<string>();
  const outcomes = entries.map(({ flag }): readonly Evaluation[] | undefined => {
    // A flag whose answer is fixed costs nothing to evaluate.
    if (flag.constant !== undefined) return undefined;
    const parents = Array.isArray(flag.dependencies)
      ? flag.dependencies.map((dependency) =>
          raws.get((dependency as { feature?: unknown } | null)?.feature as string),
        )
      : [];
    const reads = flagReads(raws.get(flag.name), parents, segments, custom);
    if (reads === undefined) return undefined;
    for (const field of reads) fields.add(field);
    return flag.results.outcomes;
  });
  const memo = new ResultMemo(fields, outcomes, budgetBytes, shared.maxValueLength);
  return memo.usable ? memo : undefined;
}

/**
 * Compiles a client-features payload into an immutable snapshot. Odd data never throws: each
 * problem is reported once through `options.onWarning` and the affected part does not match.
 */
export function compile(payload: ClientFeatures, options: CompileOptions = {}): Snapshot {
  const evaluation = new EvaluationState(options.clock ?? Date.now);
  const checks = new SharedChecks(evaluation);
  const maxValueLength = options.maxContextValueLength ?? DEFAULT_MAX_CONTEXT_VALUE_LENGTH;
  const shared: SharedEnvironment = {
    segments: compileSegments(payload?.segments, options.onWarning, {
      checks,
      evaluation,
      maxValueLength,
    }),
    checks,
    evaluation,
    maxValueLength,
    custom: customStrategies(options),
    random: drawsThatVary(options.random ?? Math.random, evaluation),
    hostname: options.hostname,
    onWarning: options.onWarning,
  };
  const rawFeatures: unknown = payload?.features;
  if (!Array.isArray(rawFeatures)) options.onWarning?.({ message: '"features" is not a list' });
  const flags = new Map<string, CompiledFlag>();
  /** Each compiled flag's definition as the payload gives it (what `memoOf` reads). */
  const raws = new Map<string, unknown>();
  for (const raw of Array.isArray(rawFeatures) ? rawFeatures : []) {
    const flag = compileFeature(raw, shared);
    if (flag === undefined) continue;
    if (flags.has(flag.name)) {
      options.onWarning?.({
        flag: flag.name,
        message: 'duplicate flag name: the first one is used',
      });
      continue;
    }
    flags.set(flag.name, flag);
    raws.set(flag.name, raw);
  }
  checks.seal();
  const entries: Entry[] = [];
  for (const flag of flags.values()) {
    entries.push({ flag, requirements: linkDependencies(flag, flags, shared) });
  }
  const memo =
    (options.memoBytes ?? 0) > 0
      ? memoOf(payload, entries, raws, shared, options.memoBytes as number)
      : undefined;
  return new CompiledSnapshot(payload, entries, evaluation, memo);
}
