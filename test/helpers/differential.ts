import type {
  ExportResult,
  ImportConstraint,
  ImportFeatureEnvironment,
  ImportStrategy,
  ImportVariant,
} from '@flags/schemas';
import { SeededPicker } from './seeded-random.js';
import {
  type SegmentDefinition,
  UNLEASH_ENVIRONMENTS,
  type UnleashEnvironment,
} from './unleash-server.js';

/**
 * Seeded inputs for differential tests against unleash-server: a flag set (segments to create
 * first, then one import document per environment) and contexts to evaluate it with. The same seed
 * gives the same flags and contexts.
 *
 * Everything stays within what unleash-server 8.2 imports as it stands, and every answer is a
 * function of the context:
 * - contexts always carry `sessionId`, `remoteAddress` and `properties.tenant`, so the fallbacks
 *   of `default` stickiness and the custom stickiness never reach randomness; `userId` is
 *   sometimes absent (anonymous visitors), so variants never stick to it;
 * - no `currentTime` (unleash-server's frontend API would move it into `properties`): date
 *   constraints compare against the evaluation time, with dates far from it;
 * - variant weights as an Unleash export carries them: `variable` ones share what `fix` ones
 *   leave, evenly (unleash-server rewrites them so on import), and feature variants in name order
 *   (unleash-server serves them so whatever order they were imported in);
 * - every enabled flag has a strategy (unleash-server adds one to a flag enabled without any);
 * - every strategy with strategy variants has a `groupId` (see `strategy`: without one, the
 *   implementations hash differently).
 */

export interface FlagSet {
  /** Global segments; create them (`POST /api/admin/segments`) before importing. */
  readonly segments: readonly SegmentDefinition[];
  /** The `data` of an import request into project `default`, per environment. */
  readonly documents: Readonly<Record<UnleashEnvironment, ExportResult>>;
}

export interface GeneratedContext {
  userId?: string;
  sessionId: string;
  remoteAddress: string;
  appName?: string;
  properties: Record<string, string>;
}

const AREAS = ['checkout', 'search', 'profile', 'billing', 'onboarding', 'feed', 'admin'];
const REGIONS = ['eu', 'us', 'apac', 'latam'];
const PLANS = ['free', 'pro', 'enterprise'];
const APPS = ['web', 'ios', 'android'];
const DOMAINS = ['example.com', 'Example.org', 'mail.test'];
const TENANTS = Array.from({ length: 12 }, (_, n) => `tenant-${n}`);
const VERSIONS = ['1.9.0', '2.0.0', '2.1.0', '2.1.3', '2.4.0', '3.0.0-beta.1', '3.0.0'];
/** Stickiness answered by every context (see above); rollouts may also use `userId`. */
const VARIANT_STICKINESS = ['default', 'sessionId', 'tenant'];
const ROLLOUT_STICKINESS = ['default', 'userId', 'sessionId', 'tenant'];
const USERS = 400;

const SEGMENTS: readonly SegmentDefinition[] = [
  { name: 'eu-users', constraints: [{ contextName: 'region', operator: 'IN', values: ['eu'] }] },
  {
    name: 'paying',
    constraints: [{ contextName: 'plan', operator: 'IN', values: ['pro', 'enterprise'] }],
  },
  {
    name: 'modern-app',
    constraints: [
      { contextName: 'appVersion', operator: 'SEMVER_GTE', value: '2.1.0' },
      { contextName: 'appName', operator: 'IN', values: ['ios', 'android'], inverted: true },
    ],
  },
  {
    name: 'staff',
    constraints: [
      {
        contextName: 'email',
        operator: 'STR_ENDS_WITH',
        values: ['@example.com'],
        caseInsensitive: true,
      },
    ],
  },
];

/** One generator per operator family, with the variations that matter. */
const CONSTRAINTS: readonly ((p: SeededPicker) => ImportConstraint)[] = [
  (p) => {
    const first = p.int(REGIONS.length);
    const values = REGIONS.filter((_, n) => n === first || p.chance(0.4));
    return { contextName: 'region', operator: 'IN', values };
  },
  (p) => ({ contextName: 'plan', operator: 'NOT_IN', values: [p.pick(PLANS)] }),
  (p) => ({ contextName: 'appName', operator: 'IN', values: [p.pick(APPS), p.pick(APPS)] }),
  (p) => ({
    contextName: 'userId',
    operator: 'IN',
    values: Array.from({ length: 30 }, () => `user-${p.int(USERS)}`),
  }),
  (p) => ({
    contextName: 'email',
    operator: 'STR_ENDS_WITH',
    values: [`@${p.pick(DOMAINS).toLowerCase()}`],
    caseInsensitive: p.chance(0.6),
  }),
  () => ({ contextName: 'email', operator: 'STR_STARTS_WITH', values: ['a', 'B', 'person1'] }),
  (p) => ({
    contextName: 'userId',
    operator: 'STR_CONTAINS',
    values: [String(p.int(10))],
    inverted: p.chance(0.5),
  }),
  (p) => ({
    contextName: 'seats',
    operator: p.pick(['NUM_EQ', 'NUM_GT', 'NUM_GTE', 'NUM_LT', 'NUM_LTE'] as const),
    value: String(p.int(100)),
  }),
  (p) => ({
    contextName: 'signupDate',
    operator: p.pick(['DATE_AFTER', 'DATE_BEFORE'] as const),
    value: `20${20 + p.int(6)}-0${1 + p.int(9)}-15T12:00:00.000Z`,
  }),
  // Against the evaluation time: far enough from it that the answer cannot change in a test run.
  (p) =>
    p.chance(0.5)
      ? { contextName: 'currentTime', operator: 'DATE_AFTER', value: '2020-01-01T00:00:00.000Z' }
      : { contextName: 'currentTime', operator: 'DATE_BEFORE', value: '2099-01-01T00:00:00.000Z' },
  (p) => ({
    contextName: 'appVersion',
    operator: p.pick(['SEMVER_EQ', 'SEMVER_GT', 'SEMVER_LT', 'SEMVER_GTE', 'SEMVER_LTE'] as const),
    value: p.pick(VERSIONS),
  }),
  (p) => ({
    contextName: 'email',
    operator: 'REGEX',
    value: '^[a-m][^@]*@example\\.(com|org)$',
    caseInsensitive: p.chance(0.5),
  }),
  (p) => ({ contextName: 'userId', operator: 'REGEX', value: `^user-${1 + p.int(9)}\\d*$` }),
  (p) => ({ contextName: 'tenant', operator: 'IN', values: TENANTS.slice(0, 1 + p.int(6)) }),
];

function constraint(p: SeededPicker): ImportConstraint {
  const made = p.pick(CONSTRAINTS)(p);
  // unleash-server refuses an inverted REGEX (400 "REGEX operator cannot be inverted.").
  const invertible = made.inverted === undefined && made.operator !== 'REGEX';
  return invertible && p.chance(0.15) ? { ...made, inverted: true } : made;
}

/** Weights as Unleash stores them: `fix` ones as given, `variable` ones share the rest evenly. */
function weighted<T extends { weightType: 'fix' | 'variable'; weight: number }>(
  variants: T[],
): T[] {
  const fixed = variants.filter((variant) => variant.weightType === 'fix');
  const variable = variants.filter((variant) => variant.weightType === 'variable');
  const rest = 1000 - fixed.reduce((sum, variant) => sum + variant.weight, 0);
  variable.forEach((variant, i) => {
    variant.weight = Math.floor(rest / variable.length) + (i < rest % variable.length ? 1 : 0);
  });
  return variants;
}

function payload(p: SeededPicker, name: string, i: number) {
  return p.pick([
    { type: 'string' as const, value: `${name}-${i}` },
    { type: 'json' as const, value: JSON.stringify({ layout: name, step: i }) },
    { type: 'number' as const, value: String(i * 10) },
    { type: 'csv' as const, value: `${name},${i}` },
  ]);
}

function featureVariants(p: SeededPicker): ImportVariant[] {
  const count = 1 + p.int(4);
  const stickiness = p.pick(VARIANT_STICKINESS);
  const variants = Array.from({ length: count }, (_, i) => ({
    name: ['control', 'blue', 'green', 'red'][i]!,
    // At most one fixed weight, and only beside variable ones.
    weightType: i === 1 && count > 2 && p.chance(0.5) ? ('fix' as const) : ('variable' as const),
    weight: 200,
    stickiness,
    ...(p.chance(0.7) ? { payload: payload(p, 'variant', i) } : {}),
    ...(p.chance(0.2)
      ? {
          overrides: [
            p.chance(0.5)
              ? { contextName: 'userId', values: [`user-${p.int(USERS)}`, `user-${p.int(USERS)}`] }
              : { contextName: 'tenant', values: [p.pick(TENANTS)] },
          ],
        }
      : {}),
  }));
  // In name order, as unleash-server serves them (and so exports them) whatever order they were
  // imported in: the order decides which variant a hash falls on, and which variable weight gets
  // the remainder.
  return weighted(variants.sort((a, b) => a.name.localeCompare(b.name)));
}

function strategyVariants(p: SeededPicker): NonNullable<ImportStrategy['variants']> {
  const stickiness = p.pick(VARIANT_STICKINESS);
  return weighted(
    Array.from({ length: 1 + p.int(3) }, (_, i) => ({
      name: `strategy-${['a', 'b', 'c'][i]}`,
      weightType: 'variable' as const,
      weight: 0,
      stickiness,
      ...(p.chance(0.8) ? { payload: payload(p, 'strategy', i) } : {}),
    })),
  );
}

function strategy(p: SeededPicker, featureName: string, sortOrder: number): ImportStrategy {
  // unleash-server 8 has flexibleRollout, default, remoteAddress and applicationHostname (which
  // answers by the evaluating machine's name, so it stays out); a user list is a userId constraint.
  const kind = p.pick(['flexibleRollout', 'flexibleRollout', 'default', 'remoteAddress']);
  const parameters: Record<string, string> =
    kind === 'flexibleRollout'
      ? {
          rollout: String(p.pick([0, 5, 25, 50, 75, 100, p.int(101)])),
          stickiness: p.pick(ROLLOUT_STICKINESS),
          groupId: p.chance(0.8) ? featureName : 'shared-group',
        }
      : kind === 'remoteAddress'
        ? { IPs: p.pick(['10.0.0.0/8', '10.0.0.0/8, 192.168.1.1', '172.16.3.0/24, 10.1.2.3']) }
        : {};
  const constraintCount = p.pick([0, 0, 1, 1, 2, 3]);
  const constraints = Array.from({ length: constraintCount }, () => constraint(p));
  const segments = p.chance(0.2) ? [1 + p.int(SEGMENTS.length)] : [];
  const variants = p.chance(0.2) ? strategyVariants(p) : [];
  // Strategy variants hash with the strategy's groupId. Without one, unleash-client (and so
  // unleash-server's frontend API) hashes the text "undefined" where Yggdrasil (Unleash Edge) and
  // @flags/engine use the flag name, so they would pick other variants: give every one a groupId.
  if (variants.length > 0) parameters.groupId ??= featureName;
  return {
    name: kind,
    featureName,
    sortOrder,
    parameters,
    constraints,
    segments,
    variants,
    ...(p.chance(0.1) ? { title: `${kind} ${sortOrder}` } : {}),
    // A disabled strategy beside an enabled one: it must not count.
    ...(sortOrder > 0 && p.chance(0.15) ? { disabled: true } : {}),
  };
}

interface FlagPlan {
  readonly name: string;
  readonly perEnvironment: Record<
    UnleashEnvironment,
    { enabled: boolean; strategies: ImportStrategy[]; variants: ImportVariant[] }
  >;
}

/**
 * A flag set of `count` flags (at least 20). Most flags differ between the environments in some
 * way: enabled in one only, other strategies or rollouts, other variants.
 */
export function generateFlagSet(seed: number, count = 100): FlagSet {
  const p = new SeededPicker(seed);
  const plans: FlagPlan[] = [];
  const features: ExportResult['features'] = [];
  for (let i = 0; i < count; i++) {
    const name = `${p.pick(AREAS)}.flag-${i}`;
    features.push({
      name,
      type: p.pick([
        'release',
        'release',
        'experiment',
        'operational',
        'kill-switch',
        'permission',
      ]),
      description: p.chance(0.7) ? `Flag number ${i}` : null,
      project: 'default',
      stale: false,
      impressionData: p.chance(0.3),
    });
    const development = {
      enabled: p.chance(0.85),
      strategies: Array.from({ length: 1 + p.int(3) }, (_, n) => strategy(p, name, n)),
      variants: p.chance(0.35) ? featureVariants(p) : [],
    };
    const roll = p.random();
    const production =
      roll < 0.3
        ? development // the same in both
        : roll < 0.5
          ? { ...development, enabled: !development.enabled }
          : roll < 0.8
            ? {
                ...development,
                strategies: Array.from({ length: 1 + p.int(2) }, (_, n) => strategy(p, name, n)),
              }
            : { ...development, variants: featureVariants(p) };
    plans.push({ name, perEnvironment: { development, production } });
  }

  // Children depend on one of the first ten flags, which are never children themselves
  // (unleash-server allows no chains).
  const dependencies: NonNullable<ExportResult['dependencies']> = [];
  for (let i = 10; i < count; i++) {
    if (!p.chance(0.08)) continue;
    const parent = plans[p.int(10)]!;
    const parentVariants = parent.perEnvironment.development.variants.map(
      (variant) => variant.name,
    );
    const condition = p.pick(['enabled', 'disabled', 'variant'] as const);
    dependencies.push({
      feature: plans[i]!.name,
      dependencies: [
        condition === 'disabled'
          ? { feature: parent.name, enabled: false }
          : condition === 'variant' && parentVariants.length > 0
            ? { feature: parent.name, enabled: true, variants: [parentVariants[0]!] }
            : { feature: parent.name, enabled: true },
      ],
    });
  }

  const document = (environment: UnleashEnvironment): ExportResult => {
    const featureStrategies: ImportStrategy[] = [];
    const featureEnvironments: ImportFeatureEnvironment[] = [];
    for (const plan of plans) {
      const state = plan.perEnvironment[environment];
      featureStrategies.push(...state.strategies);
      featureEnvironments.push({
        name: plan.name,
        featureName: plan.name,
        environment,
        enabled: state.enabled,
        variants: state.variants,
      });
    }
    return {
      features,
      featureStrategies,
      featureEnvironments,
      contextFields: [
        { name: 'region', legalValues: REGIONS.map((value) => ({ value })) },
        { name: 'plan', legalValues: PLANS.map((value) => ({ value })) },
        { name: 'tenant', stickiness: true },
        { name: 'seats' },
        { name: 'appVersion' },
        { name: 'email' },
        { name: 'signupDate' },
      ],
      featureTags: features
        .filter((_, i) => i % 7 === 0)
        .map((feature) => ({ featureName: feature.name, tagType: 'simple', tagValue: 'team-a' })),
      segments: SEGMENTS.map((segment, i) => ({ id: i + 1, name: segment.name })),
      tagTypes: [{ name: 'simple' }],
      dependencies,
    };
  };

  return {
    segments: SEGMENTS,
    documents: Object.fromEntries(
      UNLEASH_ENVIRONMENTS.map((environment) => [environment, document(environment)]),
    ) as Record<UnleashEnvironment, ExportResult>,
  };
}

/** `count` distinct contexts, as browsers send them to a frontend API. */
export function generateContexts(seed: number, count = 200): GeneratedContext[] {
  const p = new SeededPicker(seed);
  return Array.from({ length: count }, (_, i) => {
    const user = p.int(USERS);
    const context: GeneratedContext = {
      sessionId: `session-${i}-${p.int(100_000)}`,
      remoteAddress: p.chance(0.4)
        ? `10.${p.int(256)}.${p.int(256)}.${p.int(256)}`
        : p.pick(['192.168.1.1', '172.16.3.9', `203.0.113.${p.int(256)}`]),
      properties: {
        region: p.pick(REGIONS),
        plan: p.pick(PLANS),
        tenant: p.pick(TENANTS),
        seats: String(p.int(100)),
        appVersion: p.pick(VERSIONS),
        email: `${p.pick(['alice', 'bob', 'person1', 'Mallory', 'zed'])}${user}@${p.pick(DOMAINS)}`,
        signupDate: new Date(Date.UTC(2019 + p.int(8), p.int(12), 1 + p.int(28))).toISOString(),
      },
    };
    if (p.chance(0.85)) context.userId = `user-${user}`;
    if (p.chance(0.7)) context.appName = p.pick(APPS);
    return context;
  });
}

/** A toggle of a frontend API answer (`/api/frontend`, `/proxy`), as unleash-server sends it. */
export interface FrontendToggle {
  name: string;
  enabled: boolean;
  variant: { name: string; enabled: boolean; payload?: { type: string; value: string } };
  impressionData: boolean;
}

/**
 * A context as the frontend API's query, as `unleash-proxy-client` sends it: top-level fields by
 * name, properties as `properties[name]=value`.
 */
export function frontendQuery(context: GeneratedContext): string {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(context)) {
    if (typeof value === 'string') query.set(key, value);
  }
  for (const [key, value] of Object.entries(context.properties)) {
    query.set(`properties[${key}]`, value);
  }
  return query.toString();
}

/** The names of the flags `flagSet` enables in `environment`. */
export function enabledIn(flagSet: FlagSet, environment: UnleashEnvironment): Set<string> {
  const entries = flagSet.documents[environment].featureEnvironments ?? [];
  return new Set(entries.filter((entry) => entry.enabled).map((entry) => entry.name));
}
