import { adminRequest } from '../../scripts/demo/seed.js';
import type { UnleashEnvironment, UnleashServer } from './unleash-server.js';

/**
 * A rich unleash-server instance built through its Admin API, for `migrate from-unleash`: both
 * environments, 40+ flags covering every strategy and constraint operator family, segments,
 * strategy and environment variants, dependencies, tags of two types, custom context fields with
 * legal values, a custom strategy definition, archived flags, client / frontend tokens (and the
 * harness's admin token), and three users with different roles and passwords.
 */
export interface RichInstance {
  readonly clientTokens: readonly string[];
  readonly frontendTokens: readonly string[];
  /** API tokens in all, the admin token and the harness's own frontend tokens included. */
  readonly tokenCount: number;
  readonly users: readonly {
    login: string;
    password: string;
    role: 'Admin' | 'Editor' | 'Viewer';
  }[];
  /** Live flag names (archived ones excluded). */
  readonly flags: readonly string[];
  readonly archived: readonly string[];
}

const ENVIRONMENTS: readonly UnleashEnvironment[] = ['development', 'production'];

type Constraint = Record<string, unknown>;

/** One constraint per operator family member, each a flag of its own. */
const CONSTRAINTS: readonly [string, Constraint][] = [
  ['in', { contextName: 'plan', operator: 'IN', values: ['pro', 'enterprise'] }],
  ['not-in', { contextName: 'plan', operator: 'NOT_IN', values: ['free'] }],
  ['str-contains', { contextName: 'userId', operator: 'STR_CONTAINS', values: ['12', '7'] }],
  [
    'str-starts-with',
    {
      contextName: 'userId',
      operator: 'STR_STARTS_WITH',
      values: ['USER-1'],
      caseInsensitive: true,
    },
  ],
  [
    'str-ends-with-inverted',
    { contextName: 'userId', operator: 'STR_ENDS_WITH', values: ['3'], inverted: true },
  ],
  ['num-eq', { contextName: 'age', operator: 'NUM_EQ', value: '10' }],
  ['num-gt', { contextName: 'age', operator: 'NUM_GT', value: '2' }],
  ['num-gte', { contextName: 'age', operator: 'NUM_GTE', value: '2.5' }],
  ['num-lt', { contextName: 'age', operator: 'NUM_LT', value: '2.5' }],
  ['num-lte', { contextName: 'age', operator: 'NUM_LTE', value: '1' }],
  [
    'date-after',
    { contextName: 'currentTime', operator: 'DATE_AFTER', value: '2020-01-01T00:00:00.000Z' },
  ],
  [
    'date-before',
    { contextName: 'currentTime', operator: 'DATE_BEFORE', value: '2020-01-01T00:00:00.000Z' },
  ],
  ['semver-eq', { contextName: 'version', operator: 'SEMVER_EQ', value: '1.2.3' }],
  ['semver-gt', { contextName: 'version', operator: 'SEMVER_GT', value: '2.0.0-beta.0' }],
  ['semver-lt', { contextName: 'version', operator: 'SEMVER_LT', value: '2.0.0' }],
  ['regex', { contextName: 'userId', operator: 'REGEX', value: '^user-4[0-9]*$' }],
  [
    'in-case-insensitive-inverted',
    { contextName: 'plan', operator: 'IN', values: ['pro'], inverted: true },
  ],
];

const variants = (names: readonly string[], stickiness = 'default') =>
  names.map((name, index) => ({
    name,
    weight: Math.floor(1000 / names.length) + (index === 0 ? 1000 % names.length : 0),
    weightType: 'variable',
    stickiness,
    ...(index % 2 === 0 ? { payload: { type: 'string', value: `${name}-payload` } } : {}),
  }));

/** Builds the instance on `unleash` (a fresh one) and returns what the tests need of it. */
export async function buildRichInstance(unleash: UnleashServer): Promise<RichInstance> {
  const admin = (method: string, path: string, body?: unknown) =>
    adminRequest(unleash.url, unleash.adminToken, method, path, body);
  const project = '/api/admin/projects/default/features';
  const flags: string[] = [];
  const createFlag = async (name: string, extra: Record<string, unknown> = {}) => {
    await admin('POST', project, { name, description: `${name} (migrated)`, ...extra });
    flags.push(name);
  };
  const addStrategy = async (
    name: string,
    environment: UnleashEnvironment,
    strategy: Record<string, unknown>,
  ) =>
    (await admin(
      'POST',
      `${project}/${name}/environments/${environment}/strategies`,
      strategy,
    )) as {
      id: string;
    };
  const turnOn = (name: string, environment: UnleashEnvironment) =>
    admin('POST', `${project}/${name}/environments/${environment}/on`);

  // Context fields with legal values, a custom strategy, tag types, segments.
  await admin('POST', '/api/admin/context', {
    name: 'plan',
    description: 'Billing plan',
    stickiness: true,
    legalValues: [
      { value: 'free' },
      { value: 'pro', description: 'Paid' },
      { value: 'enterprise', description: 'Contract' },
    ],
  });
  await admin('POST', '/api/admin/context', { name: 'age', description: 'Account age in years' });
  await admin('POST', '/api/admin/context', { name: 'version', description: 'App version' });
  await admin('POST', '/api/admin/strategies', {
    name: 'betaCohort',
    description: 'Users of the beta cohort',
    parameters: [{ name: 'cohort', type: 'string', description: 'Cohort name', required: true }],
  });
  await admin('POST', '/api/admin/tag-types', { name: 'team', description: 'Owning team' });
  const paying = (await admin('POST', '/api/admin/segments', {
    name: 'paying',
    description: 'Pro and enterprise plans',
    constraints: [{ contextName: 'plan', operator: 'IN', values: ['pro', 'enterprise'] }],
  })) as { id: number };
  const veterans = (await admin('POST', '/api/admin/segments', {
    name: 'veterans',
    constraints: [{ contextName: 'age', operator: 'NUM_GTE', value: '2' }],
  })) as { id: number };

  // One flag per constraint operator, on in both environments with a 50 % rollout.
  for (const [suffix, constraint] of CONSTRAINTS) {
    const name = `op-${suffix}`;
    await createFlag(name);
    for (const environment of ENVIRONMENTS) {
      await addStrategy(name, environment, {
        name: 'flexibleRollout',
        title: `${suffix} for half`,
        parameters: {
          rollout: environment === 'production' ? '50' : '100',
          stickiness: 'default',
          groupId: name,
        },
        constraints: [constraint],
      });
      await turnOn(name, environment);
    }
  }

  // Every strategy family, with stickiness and groups.
  const strategies: [string, Record<string, unknown>][] = [
    ['standard', { name: 'default' }],
    [
      'rollout-user',
      {
        name: 'flexibleRollout',
        parameters: { rollout: '30', stickiness: 'userId', groupId: 'g' },
      },
    ],
    [
      'rollout-session',
      {
        name: 'flexibleRollout',
        parameters: { rollout: '70', stickiness: 'sessionId', groupId: 'g' },
      },
    ],
    [
      'rollout-custom-stickiness',
      { name: 'flexibleRollout', parameters: { rollout: '40', stickiness: 'plan', groupId: 'p' } },
    ],
    ['ips', { name: 'remoteAddress', parameters: { IPs: '10.0.0.1, 192.168.0.0/16' } }],
    ['hosts', { name: 'applicationHostname', parameters: { hostNames: 'no-such-host.example' } }],
    [
      'custom-then-standard',
      { name: 'betaCohort', parameters: { cohort: 'early' }, title: 'custom first' },
    ],
  ];
  for (const [suffix, strategy] of strategies) {
    const name = `strategy-${suffix}`;
    await createFlag(name, suffix === 'standard' ? { impressionData: true } : {});
    for (const environment of ENVIRONMENTS) {
      await addStrategy(name, environment, strategy);
      if (suffix === 'custom-then-standard') {
        await addStrategy(name, environment, {
          name: 'flexibleRollout',
          parameters: { rollout: '25', stickiness: 'default', groupId: name },
        });
      }
      if (environment === 'production' || suffix !== 'hosts') await turnOn(name, environment);
    }
  }

  // Strategy variants (several stickinesses), segments, disabled strategies, environment variants.
  for (let i = 0; i < 6; i++) {
    const name = `variants-strategy-${i}`;
    await createFlag(name, { type: 'experiment' });
    for (const environment of ENVIRONMENTS) {
      await addStrategy(name, environment, {
        name: 'flexibleRollout',
        title: `experiment ${i}`,
        parameters: { rollout: String(40 + i * 10), stickiness: 'default', groupId: name },
        variants: variants(
          i % 2 === 0 ? ['control', 'treatment'] : ['a', 'b', 'c'],
          i % 3 === 0 ? 'sessionId' : 'default',
        ),
        ...(i % 2 === 1 ? { segments: [paying.id] } : {}),
      });
      await turnOn(name, environment);
    }
  }
  for (let i = 0; i < 5; i++) {
    const name = `variants-environment-${i}`;
    await createFlag(name, { type: i % 2 === 0 ? 'release' : 'operational' });
    for (const environment of ENVIRONMENTS) {
      await addStrategy(name, environment, {
        name: 'default',
        ...(i === 4 ? { segments: [paying.id, veterans.id] } : {}),
      });
      await admin(
        'PUT',
        `${project}/${name}/environments/${environment}/variants`,
        variants(environment === 'production' ? ['blue', 'green'] : ['red', 'yellow', 'purple']),
      );
      await turnOn(name, environment);
    }
  }
  for (let i = 0; i < 3; i++) {
    const name = `disabled-strategy-${i}`;
    await createFlag(name);
    for (const environment of ENVIRONMENTS) {
      await addStrategy(name, environment, { name: 'default', disabled: true, title: 'paused' });
      await addStrategy(name, environment, {
        name: 'flexibleRollout',
        parameters: { rollout: '10', stickiness: 'default', groupId: name },
        segments: [veterans.id],
      });
      await turnOn(name, environment);
    }
  }

  // The order of strategies decides which variants apply: made, then reordered.
  await createFlag('reordered');
  for (const environment of ENVIRONMENTS) {
    const first = await addStrategy('reordered', environment, {
      name: 'default',
      variants: variants(['first']),
    });
    const second = await addStrategy('reordered', environment, {
      name: 'default',
      variants: variants(['second']),
    });
    await admin(
      'POST',
      `${project}/reordered/environments/${environment}/strategies/set-sort-order`,
      [
        { id: second.id, sortOrder: 0 },
        { id: first.id, sortOrder: 1 },
      ],
    );
    await turnOn('reordered', environment);
  }

  // Dependencies: on a parent, on its variants, on a parent being off.
  await createFlag('parent');
  for (const environment of ENVIRONMENTS) {
    await addStrategy('parent', environment, {
      name: 'flexibleRollout',
      parameters: { rollout: '60', stickiness: 'default', groupId: 'parent' },
      variants: variants(['v1', 'v2']),
    });
    await turnOn('parent', environment);
  }
  const children: [string, Record<string, unknown>][] = [
    ['child-enabled', { feature: 'parent', enabled: true }],
    ['child-variant', { feature: 'parent', enabled: true, variants: ['v1'] }],
    ['child-disabled', { feature: 'parent', enabled: false }],
  ];
  for (const [name, dependency] of children) {
    await createFlag(name);
    await admin('POST', `${project}/${name}/dependencies`, dependency);
    for (const environment of ENVIRONMENTS) {
      await addStrategy(name, environment, { name: 'default' });
      await turnOn(name, environment);
    }
  }

  // Off in one environment, stale, kill switches.
  for (let i = 0; i < 4; i++) {
    const name = `mixed-${i}`;
    await createFlag(name, { type: i < 2 ? 'kill-switch' : 'permission' });
    await addStrategy(name, 'development', { name: 'default' });
    await addStrategy(name, 'production', {
      name: 'flexibleRollout',
      parameters: { rollout: '50', stickiness: 'default', groupId: name },
    });
    await turnOn(name, i % 2 === 0 ? 'development' : 'production');
    if (i === 3) {
      await admin('PATCH', `${project}/${name}`, [{ op: 'replace', path: '/stale', value: true }]);
    }
  }

  // More flags than one page of unleash-server's search (100), made by its batch import.
  for (const environment of ENVIRONMENTS) {
    const names = Array.from({ length: 120 }, (_, i) => `bulk-${String(i).padStart(3, '0')}`);
    await unleash.importFlags(
      {
        features: names.map((name) => ({ name, project: 'default', type: 'release' })),
        featureStrategies: names.map((name, i) => ({
          name: 'flexibleRollout',
          featureName: name,
          parameters: { rollout: String(i % 100), stickiness: 'default', groupId: name },
          constraints: [],
        })),
        featureEnvironments: names.map((name, i) => ({
          name,
          featureName: name,
          environment,
          enabled: i % 3 !== 0,
        })),
        tagTypes: [],
      } as never,
      environment,
    );
    if (environment === 'development') flags.push(...names);
  }

  // Tags of two types.
  for (const [index, name] of flags.entries()) {
    await admin('POST', `/api/admin/features/${name}/tags`, {
      type: index % 2 === 0 ? 'simple' : 'team',
      value: index % 3 === 0 ? 'payments' : 'growth',
    });
  }

  // Archived flags, one of them with strategies and tags.
  // The harness's import waits with a probe flag per import, archived after: two more archived.
  const archived = ['archived-0', 'archived-1', 'archived-2', 'harness-probe-1', 'harness-probe-2'];
  for (const name of archived.slice(0, 3)) {
    await admin('POST', project, { name, description: 'gone' });
    await addStrategy(name, 'production', { name: 'default' });
    await turnOn(name, 'production');
    await admin('POST', `/api/admin/features/${name}/tags`, { type: 'team', value: 'legacy' });
    await admin('DELETE', `${project}/${name}`);
  }

  // Tokens of every kind unleash-server makes (its admin token is the harness's).
  const clientTokens: string[] = [];
  const frontendTokens: string[] = [];
  for (const environment of ENVIRONMENTS) {
    clientTokens.push(await unleash.createToken({ type: 'client', environment }));
    frontendTokens.push(await unleash.createToken({ type: 'frontend', environment }));
  }
  const scoped = (await admin('POST', '/api/admin/api-tokens', {
    tokenName: 'default-only',
    type: 'client',
    environment: 'production',
    projects: ['default'],
    expiresAt: '2099-01-01T00:00:00.000Z',
  })) as { secret: string };
  clientTokens.push(scoped.secret);

  const users = [
    { login: 'alice@example.com', password: 'Alice-passphrase-1!', role: 'Admin' as const },
    { login: 'bob', password: 'Bob-passphrase-2!', role: 'Editor' as const },
    { login: 'carol@example.com', password: 'Carol-passphrase-3!', role: 'Viewer' as const },
  ];
  const roleIds = { Admin: 1, Editor: 2, Viewer: 3 };
  for (const user of users) {
    await admin('POST', '/api/admin/user-admin', {
      ...(user.login.includes('@') ? { email: user.login } : { username: user.login }),
      name: user.login.split('@')[0],
      rootRole: roleIds[user.role],
      password: user.password,
      sendEmail: false,
    });
  }

  await settle(unleash, frontendTokens);
  // The admin token, and the frontend token of each environment the harness's import waits with.
  const tokenCount = clientTokens.length + frontendTokens.length + 1 + 2;
  return { clientTokens, frontendTokens, tokenCount, users, flags, archived };
}

/**
 * Waits until unleash-server's frontend API serves what was written (it refreshes after a revision
 * poll): a probe flag is made, waited for with every frontend token, archived and waited for until
 * gone.
 */
export async function settle(unleash: UnleashServer, frontendTokens: readonly string[]) {
  const admin = (method: string, path: string, body?: unknown) =>
    adminRequest(unleash.url, unleash.adminToken, method, path, body);
  const probe = `settle-probe-${Date.now()}`;
  const feature = `/api/admin/projects/default/features/${probe}`;
  await admin('POST', '/api/admin/projects/default/features', { name: probe });
  for (const environment of ENVIRONMENTS) {
    await admin('POST', `${feature}/environments/${environment}/strategies`, { name: 'default' });
    await admin('POST', `${feature}/environments/${environment}/on`);
  }
  const shows = async (token: string) => {
    const response = await fetch(`${unleash.url}/api/frontend`, {
      headers: { authorization: token },
    });
    const body = (await response.json()) as { toggles?: { name: string }[] };
    return (body.toggles ?? []).some((toggle) => toggle.name === probe);
  };
  const waitUntil = async (present: boolean) => {
    const deadline = Date.now() + 30_000;
    for (const token of frontendTokens) {
      while ((await shows(token)) !== present) {
        if (Date.now() > deadline) throw new Error(`unleash-server's frontend API did not settle`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  };
  await waitUntil(true);
  await admin('DELETE', feature);
  await waitUntil(false);
  // Archived flags are copied too: the probe goes for good.
  await admin('DELETE', `/api/admin/archive/${probe}`);
}
