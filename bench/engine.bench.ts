// `npm run bench:engine`: evaluates a realistic 200-flag payload for 1000 distinct contexts with
// @flags/engine and with unleash-client (the Node SDK, bootstrapped offline) in the same process,
// checks that both give the same answers, and prints µs per context, ns per flag, heap and ratio.
import { hostname } from 'node:os';
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { type Context, compile } from '@flags/engine';
import type { ClientFeature, ClientFeatures, Constraint, Segment, Strategy } from '@flags/schemas';
import { InMemStorageProvider, Unleash } from 'unleash-client';

const FLAGS = 200;
const CONTEXTS = 1000;
/** Timed rounds per engine; unleash-client sees CONTEXTS / ROUNDS contexts per round. */
const ROUNDS = 50;
const HOSTNAME = (process.env.HOSTNAME || hostname() || 'undefined').toLowerCase();

// Deterministic pseudo-random numbers (mulberry32), so every run measures the same payload.
function generator(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = generator(20251121);
const pick = <T>(list: readonly T[]): T => list[Math.floor(rand() * list.length)]!;
const int = (min: number, max: number): number => min + Math.floor(rand() * (max - min + 1));

const ENVIRONMENTS = ['production', 'staging', 'development'];
const APPS = ['web', 'ios', 'android', 'backend'];
const COUNTRIES = ['NO', 'SE', 'DK', 'DE', 'FR', 'US', 'BR', 'JP'];
const DOMAINS = ['example.com', 'Example.org', 'corp.example.net', 'mail.test'];
const PLANS = ['free', 'pro', 'enterprise'];

// One constraint per family, with the variations that matter (caseInsensitive, inverted).
const CONSTRAINTS: readonly (() => Constraint)[] = [
  () => ({ contextName: 'environment', operator: 'IN', values: [pick(ENVIRONMENTS)] }),
  () => ({ contextName: 'appName', operator: 'NOT_IN', values: [pick(APPS), pick(APPS)] }),
  () => ({ contextName: 'country', operator: 'IN', values: COUNTRIES.slice(0, int(2, 6)) }),
  () => ({
    contextName: 'email',
    operator: 'STR_ENDS_WITH',
    values: [`@${pick(DOMAINS).toLowerCase()}`],
    caseInsensitive: true,
  }),
  () => ({ contextName: 'email', operator: 'STR_STARTS_WITH', values: ['a', 'b', 'c', 'd'] }),
  () => ({ contextName: 'email', operator: 'STR_CONTAINS', values: ['.'], inverted: true }),
  () => ({ contextName: 'age', operator: pick(['NUM_GT', 'NUM_LTE']), value: String(int(18, 60)) }),
  () => ({ contextName: 'age', operator: 'NUM_EQ', value: String(int(18, 60)), inverted: true }),
  () => ({ contextName: 'currentTime', operator: 'DATE_AFTER', value: '2024-01-01T00:00:00.000Z' }),
  () => ({
    contextName: 'currentTime',
    operator: 'DATE_BEFORE',
    value: '2030-06-01T12:00:00+02:00',
  }),
  () => ({
    contextName: 'appVersion',
    operator: pick(['SEMVER_GTE', 'SEMVER_LT', 'SEMVER_EQ']),
    value: pick(['2.3.0', '2.5.1', '3.0.0-beta.2', '2.4.0']),
  }),
  () => ({ contextName: 'email', operator: 'REGEX', value: '^[a-m][^@]*@example\\.(com|org)$' }),
  () => ({
    contextName: 'userId',
    operator: 'REGEX',
    value: `^user-${int(1, 9)}\\d*$`,
    caseInsensitive: true,
  }),
  () => ({
    contextName: 'remoteAddress',
    operator: 'IN_CIDR',
    values: ['10.0.0.0/8', '192.168.1.0/24'],
  }),
  () => ({ contextName: 'plan', operator: 'IN', values: [pick(PLANS)], inverted: rand() < 0.3 }),
];

const constraints = (count: number): Constraint[] =>
  Array.from({ length: count }, () => pick(CONSTRAINTS)());

const SEGMENTS: Segment[] = Array.from({ length: 12 }, (_, id) => ({
  id: id + 1,
  name: `segment-${id + 1}`,
  constraints: constraints(int(1, 3)),
}));

function variants(count: number, stickiness: string): NonNullable<ClientFeature['variants']> {
  return Array.from({ length: count }, (_, i) => ({
    name: `v${i}`,
    weight:
      i === count - 1 ? 1000 - Math.floor(1000 / count) * (count - 1) : Math.floor(1000 / count),
    weightType: 'variable',
    stickiness,
    payload:
      i % 2 === 0
        ? { type: 'json', value: JSON.stringify({ color: `c${i}`, size: i * 10 }) }
        : { type: 'string', value: `value-${i}` },
    ...(i === 0 && rand() < 0.3
      ? { overrides: [{ contextName: 'userId', values: ['user-1', 'user-2', 'user-3'] }] }
      : {}),
  }));
}

/** A strategy of every kind; `random` ones are left out of the agreement check. */
function strategy(flag: string, kind: number): { strategy: Strategy; random: boolean } {
  const groupId = rand() < 0.7 ? flag : `group-${int(1, 5)}`;
  const base = { constraints: constraints(int(0, 2)), segments: [] as number[] };
  if (rand() < 0.25) base.segments.push(int(1, SEGMENTS.length));
  switch (kind % 10) {
    case 0:
      return { strategy: { name: 'default', parameters: {}, ...base }, random: false };
    case 1:
    case 2:
    case 3: {
      const stickiness = pick(['default', 'default', 'default', 'userId', 'sessionId', 'tenantId']);
      const sticky = rand() < 0.1 ? 'random' : stickiness;
      const withVariants = rand() < 0.35;
      return {
        strategy: {
          name: 'flexibleRollout',
          parameters: { rollout: String(pick([5, 25, 50, 80, 100])), stickiness: sticky, groupId },
          ...base,
          ...(withVariants ? { variants: variants(int(2, 3), sticky) } : {}),
        },
        random: sticky === 'random',
      };
    }
    case 4: {
      const userIds = Array.from({ length: 30 }, () => `user-${int(1, 2000)}`).join(', ');
      return { strategy: { name: 'userWithId', parameters: { userIds }, ...base }, random: false };
    }
    case 5:
      return {
        strategy: {
          name: 'remoteAddress',
          parameters: { IPs: `10.1.0.0/16, 192.168.1.${int(1, 254)}, 172.16.0.0/12` },
          ...base,
        },
        random: false,
      };
    case 6:
      return {
        strategy: {
          name: 'applicationHostname',
          parameters: { hostNames: `build-1,${rand() < 0.5 ? HOSTNAME : 'other-host'}` },
          ...base,
        },
        random: false,
      };
    case 7:
      return {
        strategy: {
          name: 'gradualRolloutUserId',
          parameters: { percentage: String(int(10, 90)), groupId },
          ...base,
        },
        random: false,
      };
    case 8:
      return {
        strategy: {
          name: 'gradualRolloutSessionId',
          parameters: { percentage: String(int(10, 90)), groupId },
          ...base,
        },
        random: false,
      };
    default:
      if (rand() < 0.7) return strategy(flag, 0);
      return {
        strategy: { name: 'gradualRolloutRandom', parameters: { percentage: '40' }, ...base },
        random: true,
      };
  }
}

function buildPayload(): { payload: ClientFeatures; randomFlags: Set<string> } {
  const features: ClientFeature[] = [];
  const randomFlags = new Set<string>();
  for (let i = 0; i < FLAGS; i++) {
    const name = `flag.${String(i).padStart(3, '0')}.${pick(['checkout', 'search', 'ui', 'api'])}`;
    const strategies: Strategy[] = [];
    for (let s = 0, count = int(1, 3); s < count; s++) {
      const made = strategy(name, int(0, 9));
      strategies.push(made.strategy);
      if (made.random) randomFlags.add(name);
    }
    const feature: ClientFeature = {
      name,
      type: 'release',
      project: 'default',
      enabled: rand() > 0.1,
      stale: false,
      impressionData: rand() < 0.1,
      strategies,
      variants: rand() < 0.3 ? variants(int(2, 4), pick(['default', 'sessionId', 'tenantId'])) : [],
    };
    // Some flags depend on an earlier flag that has no dependencies itself.
    if (i > 10 && rand() < 0.08) {
      const parent = features[int(0, 9)]!;
      const parentVariant = parent.variants?.[0]?.name;
      feature.dependencies = [
        rand() < 0.3
          ? { feature: parent.name, enabled: false }
          : parentVariant && rand() < 0.5
            ? { feature: parent.name, variants: [parentVariant] }
            : { feature: parent.name },
      ];
    }
    features.push(feature);
  }
  // A child inherits the randomness of its parent.
  for (const feature of features) {
    for (const dependency of feature.dependencies ?? []) {
      if (randomFlags.has(dependency.feature)) randomFlags.add(feature.name);
    }
  }
  return { payload: { version: 2, features, segments: SEGMENTS }, randomFlags };
}

function buildContexts(): Context[] {
  return Array.from({ length: CONTEXTS }, (_, i) => {
    const user = `user-${i + 1}`;
    const local = pick(['alice', 'bob', 'carol', 'dave', 'erin', 'mallory', 'zed']) + i;
    const context: Context = {
      appName: pick(APPS),
      environment: pick(ENVIRONMENTS),
      sessionId: `session-${int(1, 1_000_000)}`,
      remoteAddress: pick([
        `10.${int(0, 3)}.${int(0, 255)}.${int(1, 254)}`,
        `192.168.1.${int(1, 254)}`,
        `172.${int(10, 40)}.${int(0, 255)}.${int(1, 254)}`,
        `${int(11, 223)}.${int(0, 255)}.${int(0, 255)}.${int(1, 254)}`,
      ]),
      properties: {
        country: pick(COUNTRIES),
        email: `${local}@${pick(DOMAINS)}`,
        age: String(int(13, 80)),
        appVersion: pick([
          '2.2.9',
          '2.3.0',
          '2.4.1',
          '2.5.1',
          '3.0.0-beta.1',
          '3.0.0-beta.10',
          '3.0.0',
        ]),
        tenantId: `tenant-${int(1, 50)}`,
        plan: pick(PLANS),
      },
    };
    if (rand() < 0.9) context.userId = user;
    if (rand() < 0.2) context.currentTime = new Date(Date.UTC(2025, int(0, 11), int(1, 28)));
    return context;
  });
}

/** Contexts as a service receives them: parsed from JSON (flat strings), `currentTime` a Date. */
function asReceived(contexts: Context[]): Context[] {
  return contexts.map((context) => {
    const parsed = JSON.parse(JSON.stringify(context)) as Context & { currentTime?: string };
    return parsed.currentTime === undefined
      ? parsed
      : { ...parsed, currentTime: new Date(parsed.currentTime) };
  });
}

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

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

async function main(): Promise<void> {
  const { payload, randomFlags } = buildPayload();
  const contexts = asReceived(buildContexts());
  const names = payload.features.map((feature) => feature.name);

  gc();
  const heapBefore = process.memoryUsage().heapUsed;
  const compileStart = performance.now();
  const snapshot = compile(payload, { hostname: HOSTNAME });
  const compileMs = performance.now() - compileStart;
  gc();
  const snapshotHeap = process.memoryUsage().heapUsed - heapBefore;

  const unleash = new Unleash({
    url: 'http://127.0.0.1:1/api',
    appName: 'bench',
    disableMetrics: true,
    refreshInterval: 0, // never polls: the bootstrap below is all it gets
    bootstrap: { data: payload.features as never, segments: payload.segments as never },
    storageProvider: new InMemStorageProvider(),
    skipInstanceCountWarning: true,
  });
  unleash.on('error', () => {});
  unleash.on('warn', () => {});
  await new Promise<void>((resolve) => unleash.once('ready', () => resolve()));

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

  const enabled = contexts.reduce(
    (count, context) => count + snapshot.evaluateAll(context).filter((r) => r.enabled).length,
    0,
  );
  console.log(
    `payload: ${FLAGS} flags, ${SEGMENTS.length} segments, ${CONTEXTS} contexts, ` +
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
  if (disagreements > 0) process.exitCode = 1;
}

await main();
