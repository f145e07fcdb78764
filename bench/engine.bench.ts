// `npm run bench:engine`: evaluates a realistic 200-flag payload for 1000 distinct contexts with
// @flags/engine and with unleash-client (the Node SDK, bootstrapped offline) in the same process,
// checks that both give the same answers, and prints µs per context, ns per flag, heap and ratio,
// and what the payload's REGEX constraints cost.
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { type Context, compile } from '@flags/engine';
import type { ClientFeatures, Constraint } from '@flags/schemas';
import { RE2JS } from 're2js';
import { linearNativeRegex } from '../packages/engine/src/parse/regex.js';
import { offlineUnleash, SDK_HOSTNAME } from '../packages/engine/test/fixtures/offline-unleash.js';
import { realisticWorkload } from '../packages/engine/test/fixtures/realistic.js';

const FLAGS = 200;
const CONTEXTS = 1000;
/** Timed rounds per engine; unleash-client sees CONTEXTS / ROUNDS contexts per round. */
const ROUNDS = 50;

let sink = 0;

/** Microseconds per context of one round over `batch`. */
function timeRound(batch: readonly Context[], evaluate: (context: Context) => void): number {
  const start = performance.now();
  for (const context of batch) evaluate(context);
  return ((performance.now() - start) * 1000) / batch.length;
}

/**
 * Heap allocated per context: heap growth over a few contexts right after a full GC (too few
 * for a young-generation collection to run in between, so nothing is freed meanwhile).
 */
function allocatedPerContext(evaluate: (context: Context) => void, sample: Context[]): number {
  gc();
  const before = process.memoryUsage().heapUsed;
  for (const context of sample) evaluate(context);
  return (process.memoryUsage().heapUsed - before) / sample.length;
}

const kb = (bytes: number): string => `${(bytes / 1024).toFixed(1)} KB`;

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[values.length >> 1]!;
const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

interface RegexCost {
  readonly patterns: number;
  readonly native: number;
  /** µs per context to test every distinct pattern: the engine's way, and re2js for all. */
  readonly oursUs: number;
  readonly re2jsUs: number;
}

/**
 * The payload's distinct REGEX constraints tested on each context's value, as the engine runs
 * them (a native RegExp where proven equivalent and linear, re2js otherwise) and with re2js for
 * every pattern: what linear-time REGEX costs here, and what the native path saves.
 */
function regexCost(payload: ClientFeatures, contexts: readonly Context[]): RegexCost {
  const constraints = new Map<string, Constraint>();
  const collect = (list: readonly Constraint[] | undefined) => {
    for (const constraint of list ?? []) {
      if (constraint.operator !== 'REGEX') continue;
      const { contextName, value, caseInsensitive } = constraint;
      constraints.set(JSON.stringify([contextName, value, caseInsensitive]), constraint);
    }
  };
  for (const feature of payload.features) {
    for (const strategy of feature.strategies ?? []) collect(strategy.constraints);
  }
  for (const segment of payload.segments ?? []) collect(segment.constraints);
  type Test = { readonly name: string; readonly regex: { test(value: string): boolean } };
  const ours: Test[] = [];
  const re2js: Test[] = [];
  for (const { contextName: name, value, caseInsensitive } of constraints.values()) {
    const pattern = String(value);
    const re2 = RE2JS.compile(pattern, caseInsensitive ? RE2JS.CASE_INSENSITIVE : 0);
    ours.push({ name, regex: linearNativeRegex(pattern, caseInsensitive === true) ?? re2 });
    re2js.push({ name, regex: re2 });
  }
  const read = (context: Context, name: string): string | undefined =>
    ((context as Record<string, unknown>)[name] as string | undefined) ??
    (context.properties?.[name] as string | undefined);
  const run = (tests: readonly Test[]) => (context: Context) => {
    for (const { name, regex } of tests) {
      const value = read(context, name);
      if (value !== undefined && regex.test(value)) sink++;
    }
  };
  const rounds = (tests: readonly Test[]) => {
    for (let i = 0; i < 3; i++) timeRound(contexts, run(tests));
    return median(Array.from({ length: 20 }, () => timeRound(contexts, run(tests))));
  };
  return {
    patterns: ours.length,
    native: ours.filter(({ regex }) => regex instanceof RegExp).length,
    oursUs: rounds(ours),
    re2jsUs: rounds(re2js),
  };
}

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

async function main(): Promise<void> {
  const { payload, randomFlags, contexts } = realisticWorkload({
    flags: FLAGS,
    contexts: CONTEXTS,
    hostname: SDK_HOSTNAME,
  });
  const names = payload.features.map((feature) => feature.name);

  gc();
  const heapBefore = process.memoryUsage().heapUsed;
  const compileStart = performance.now();
  const snapshot = compile(payload, { hostname: SDK_HOSTNAME });
  const compileMs = performance.now() - compileStart;
  gc();
  const snapshotHeap = process.memoryUsage().heapUsed - heapBefore;

  const unleash = await offlineUnleash(payload, 'bench');

  // Same answers? enabled + variant name for every flag and context (random-stickiness flags aside).
  let disagreements = 0;
  let compared = 0;
  for (const context of contexts) {
    const ours = snapshot.evaluateAll(context);
    for (let i = 0; i < names.length; i++) {
      const name = names[i]!;
      if (randomFlags.has(name)) continue;
      const theirs = unleash.getVariant(name, context as never);
      compared++;
      if (theirs.feature_enabled !== ours[i]!.enabled || theirs.name !== ours[i]!.variant.name) {
        if (disagreements < 5) {
          console.log('disagreement', name, JSON.stringify(context), theirs, ours[i]);
        }
        disagreements++;
      }
    }
  }

  const engineEvaluate = (context: Context) => {
    sink += snapshot.evaluateAll(context).length;
  };
  const unleashEvaluate = (context: Context) => {
    for (const name of names) if (unleash.getVariant(name, context as never).enabled) sink++;
  };
  // Warm-up: every context through both.
  for (let i = 0; i < 5; i++) timeRound(contexts, engineEvaluate);
  timeRound(contexts, unleashEvaluate);
  gc();
  const heapStart = process.memoryUsage().heapUsed;
  // Short rounds of similar length (all contexts for the engine, a slice of them for
  // unleash-client) alternate, so both see the same machine load; medians over the rounds.
  const engineRounds: number[] = [];
  const unleashRounds: number[] = [];
  const slice = CONTEXTS / ROUNDS;
  for (let round = 0; round < ROUNDS; round++) {
    engineRounds.push(timeRound(contexts, engineEvaluate));
    unleashRounds.push(
      timeRound(contexts.slice(round * slice, (round + 1) * slice), unleashEvaluate),
    );
  }
  const engineUs = median(engineRounds);
  const unleashUs = median(unleashRounds);
  const heapEnd = process.memoryUsage().heapUsed;
  const engineAllocated = allocatedPerContext(engineEvaluate, contexts.slice(0, 200));
  const unleashAllocated = allocatedPerContext(unleashEvaluate, contexts.slice(0, 5));
  unleash.destroy();
  const regex = regexCost(payload, contexts);

  const enabled = contexts.reduce(
    (count, context) => count + snapshot.evaluateAll(context).filter((r) => r.enabled).length,
    0,
  );
  console.log(
    `payload: ${FLAGS} flags, ${payload.segments?.length} segments, ${CONTEXTS} contexts, ` +
      `${((100 * enabled) / (FLAGS * CONTEXTS)).toFixed(1)}% of answers enabled; ` +
      `${randomFlags.size} flags with random stickiness left out of the agreement check`,
  );
  console.log(`agreement: ${compared} answers compared, ${disagreements} disagreements`);
  console.log(
    `@flags/engine  compile ${compileMs.toFixed(1)} ms, snapshot heap ≈ ${mb(snapshotHeap)}`,
  );
  console.log(
    `@flags/engine  ${engineUs.toFixed(1)} µs/context  ${((engineUs * 1000) / FLAGS).toFixed(0)} ns/flag`,
  );
  console.log(
    `unleash-client ${unleashUs.toFixed(1)} µs/context  ${((unleashUs * 1000) / FLAGS).toFixed(0)} ns/flag`,
  );
  console.log(
    `ratio: @flags/engine is ${(unleashUs / engineUs).toFixed(1)}× faster (target ≥ 50×)`,
  );
  console.log(
    `heap: allocated per context ≈ ${kb(engineAllocated)} (@flags/engine), ` +
      `${kb(unleashAllocated)} (unleash-client); process heap ${mb(heapStart)} → ${mb(heapEnd)} ` +
      `over the timed rounds (sink ${sink % 10})`,
  );
  console.log(
    `REGEX: ${regex.patterns} distinct patterns, ${regex.native} run natively; testing all of them ` +
      `costs ${regex.oursUs.toFixed(2)} µs/context (re2js for every pattern: ` +
      `${regex.re2jsUs.toFixed(2)} µs)`,
  );
  if (disagreements > 0) process.exitCode = 1;
}

await main();
