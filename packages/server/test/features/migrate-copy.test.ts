// The copy behind `flags-server migrate from-unleash`, on flags-server's storage without an
// unleash-server (test/e2e/migrate-from-unleash.test.ts runs it against the real one): what it
// writes is served, a second copy writes nothing, a failing copy leaves the database as it was,
// passwords set in flags-server are kept, configured tokens are left alone.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import bcrypt from 'bcryptjs';
import { hashSecret } from '../../src/auth/secrets.js';
import type { Database } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrate.js';
import { copyInstance, planInstance } from '../../src/migrate/copy.js';
import { countPlan, planChanges } from '../../src/migrate/plan.js';
import {
  emptyRecords,
  type FlagRecord,
  type FlagStrategy,
  type SourceInstance,
  userKey,
} from '../../src/migrate/records.js';
import { backends, dump, startApp } from '../helpers.js';

const CLIENT_SECRET = 'web:production.0123456789abcdef0123456789abcdef';
const FRONTEND_SECRET = '*:development.fedcba9876543210fedcba9876543210';
const ADMIN_SECRET = '*:*.00112233445566778899aabbccddeeff';
const PUBLIC_URL = new URL('https://flags.example.com/');

function flag(overrides: Partial<FlagRecord> = {}): FlagRecord {
  return {
    project: 'web',
    type: 'release',
    description: null,
    stale: false,
    impressionData: false,
    createdAt: '2024-01-02T03:04:05.678Z',
    archivedAt: null,
    tags: [],
    dependencies: [],
    environments: {},
    ...overrides,
  };
}

/** An unleash-server as the Admin API reader makes it. */
function source(): SourceInstance {
  const records = emptyRecords();
  records.environments.set('development', { type: 'development', sortOrder: 2, enabled: true });
  records.environments.set('production', { type: 'production', sortOrder: 3, enabled: true });
  records.projects.set('web', {
    name: 'Web',
    description: 'The web shop',
    environments: ['development', 'production'],
  });
  records.tagTypes.set('team', { description: 'Owning team', icon: null, color: '#336699' });
  records.tags.set('team:payments', {});
  records.contextFields.set('plan', {
    description: 'Billing plan',
    stickiness: true,
    sortOrder: 3,
    legalValues: [{ value: 'free' }, { value: 'pro', description: 'Paid' }],
  });
  records.strategies.set('betaCohort', {
    title: null,
    description: 'Beta users',
    parameters: [{ name: 'cohort', type: 'string', description: '', required: true }],
    deprecated: false,
  });
  records.segments.set('paying', {
    description: null,
    project: null,
    constraints: [
      {
        contextName: 'plan',
        operator: 'IN',
        values: ['pro'],
        inverted: false,
        caseInsensitive: false,
      },
    ],
  });
  const strategies: FlagStrategy[] = [
    {
      name: 'flexibleRollout',
      title: 'half of the payers',
      disabled: false,
      parameters: { rollout: '50', stickiness: 'default', groupId: 'checkout' },
      constraints: [
        {
          contextName: 'userId',
          operator: 'STR_STARTS_WITH',
          values: ['a'],
          inverted: true,
          caseInsensitive: true,
        },
      ],
      variants: [{ name: 'blue', weight: 1000, weightType: 'variable', stickiness: 'default' }],
      segments: ['paying'],
    },
    {
      name: 'default',
      title: 'paused',
      disabled: true,
      parameters: {},
      constraints: [],
      variants: [],
      segments: [],
    },
  ];
  records.flags.set(
    'checkout',
    flag({
      description: 'New checkout',
      impressionData: true,
      tags: ['team:payments'],
      environments: {
        development: { enabled: true, variants: [], strategies },
        production: {
          enabled: true,
          variants: [{ name: 'v', weight: 1000, weightType: 'variable', stickiness: 'default' }],
          strategies: [strategies[0]!],
        },
      },
    }),
  );
  records.flags.set(
    'checkout-banner',
    flag({
      dependencies: [{ parent: 'checkout', enabled: true, variants: ['blue'] }],
      environments: {
        production: {
          enabled: true,
          variants: [],
          strategies: [
            {
              name: 'default',
              title: null,
              disabled: false,
              parameters: {},
              constraints: [],
              variants: [],
              segments: [],
            },
          ],
        },
      },
    }),
  );
  records.flags.set('old-checkout', flag({ archivedAt: '2024-02-01T00:00:00.000Z', stale: true }));
  const secrets = new Map<string, string>();
  for (const [secret, record] of [
    [
      CLIENT_SECRET,
      {
        tokenName: 'web-prod',
        type: 'client',
        environment: 'production',
        projects: ['web'],
        expiresAt: '2099-01-01T00:00:00.000Z',
      },
    ],
    [
      FRONTEND_SECRET,
      {
        tokenName: 'spa',
        type: 'frontend',
        environment: 'development',
        projects: ['*'],
        expiresAt: null,
      },
    ],
    [
      ADMIN_SECRET,
      {
        tokenName: 'automation',
        type: 'admin',
        environment: null,
        projects: ['*'],
        expiresAt: null,
      },
    ],
  ] as const) {
    records.apiTokens.set(hashSecret(secret), { ...record, projects: [...record.projects] });
    secrets.set(hashSecret(secret), secret);
  }
  const userIds = new Map<string, number>();
  for (const [id, user] of [
    [1, { name: 'Ann', email: 'ann@example.com', username: null, rootRole: 'Admin' }],
    [2, { name: null, email: null, username: 'ben', rootRole: 'Viewer' }],
  ] as const) {
    const key = userKey(user.email, user.username) as string;
    records.users.set(key, user);
    userIds.set(key, id);
  }
  return { version: '8.2.0', instanceId: undefined, records, secrets, userIds, notes: [] };
}

const ANN_HASH = bcrypt.hashSync('ann passphrase', 4);
const hashes = new Map([['ann@example.com', ANN_HASH]]);

for (const backend of backends) {
  describe(`migrate from-unleash's copy on ${backend.name}`, () => {
    let db: Database;
    let cleanup: () => Promise<void>;

    before(async () => {
      ({ db, cleanup } = await backend.open());
    });
    after(() => cleanup());

    it('plans everything as new on a database flags-server never started on, writing nothing', async () => {
      const plan = await planInstance(db, source(), hashes);
      assert.ok(planChanges(plan));
      const counts = countPlan(plan);
      assert.deepEqual(counts.flags, { create: 3, update: 0, skip: 0 });
      assert.deepEqual(counts.apiTokens, { create: 3, update: 0, skip: 0 });
      assert.deepEqual(counts.users, { create: 2, update: 0, skip: 0 });
      const [tables] = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = current_schema()`,
      );
      assert.equal(tables?.n, 0);
    });

    it('copies into flags-server, which serves it to the old tokens', async () => {
      const { plan, links } = await copyInstance(db, source(), hashes, {
        publicUrl: PUBLIC_URL,
        now: new Date(),
      });
      assert.deepEqual(countPlan(plan).segments, { create: 1, update: 0, skip: 0 });
      assert.deepEqual(
        links.map((link) => link.user),
        ['ben'],
        'a link for the user without a password only',
      );
      assert.match(links[0]!.link, /^https:\/\/flags\.example\.com\/new-user\?token=[\w-]{43}$/);
      const app = await startApp(db);
      try {
        const client = await app.inject({
          url: '/api/client/features',
          headers: { authorization: CLIENT_SECRET },
        });
        assert.equal(client.statusCode, 200, client.body);
        const body = client.json() as {
          features: { name: string; enabled: boolean; strategies: { constraints: unknown[] }[] }[];
          segments?: { id: number; name?: string }[];
        };
        assert.deepEqual(
          body.features.map((feature) => feature.name).sort(),
          ['checkout', 'checkout-banner'],
          'live flags of its project, the archived one left out',
        );
        const checkout = body.features.find((feature) => feature.name === 'checkout');
        assert.equal(checkout?.strategies.length, 1, 'the disabled strategy is not served');
        // Its own constraint and its segment's (inlined for an SDK that sends no spec version).
        assert.equal(checkout?.strategies[0]?.constraints.length, 2);
        const frontend = await app.inject({
          url: '/api/frontend?userId=bob&properties[plan]=pro',
          headers: { authorization: FRONTEND_SECRET },
        });
        assert.equal(frontend.statusCode, 200, frontend.body);
        const admin = await app.inject({
          url: '/api/admin/projects/web/features/checkout',
          headers: { authorization: ADMIN_SECRET },
        });
        assert.equal(admin.statusCode, 200, admin.body);
        const development = (
          admin.json() as {
            environments: { name: string; strategies: { title: string; disabled: boolean }[] }[];
          }
        ).environments.find((environment) => environment.name === 'development');
        assert.deepEqual(
          development?.strategies.map((strategy) => [strategy.title, strategy.disabled]),
          [
            ['half of the payers', false],
            ['paused', true],
          ],
        );
      } finally {
        await app.close();
      }
      const [ann] = await db.query<{ password_hash: string; role: string }>(
        `SELECT u.password_hash, r.name AS role FROM users u
           JOIN role_user ru ON ru.user_id = u.id JOIN roles r ON r.id = ru.role_id
          WHERE u.email = 'ann@example.com'`,
      );
      assert.deepEqual(ann, { password_hash: ANN_HASH, role: 'Admin' });
      const events = await db.query<{ type: string; n: number }>(
        `SELECT type, count(*)::int AS n FROM events WHERE created_by = 'migrate from-unleash'
          GROUP BY type ORDER BY type`,
      );
      const byType = Object.fromEntries(events.map((row) => [row.type, row.n]));
      assert.equal(byType['feature-created'], 3);
      assert.equal(byType['api-token-created'], 3);
      assert.equal(byType['user-created'], 2);
      assert.equal(byType['feature-archived'], 1);
    });

    it('a second copy finds nothing to do and writes nothing', async () => {
      const before = await dump(db);
      const plan = await planInstance(db, source(), hashes);
      assert.equal(planChanges(plan), false, JSON.stringify(countPlan(plan)));
      const { plan: again } = await copyInstance(db, source(), hashes, {
        publicUrl: PUBLIC_URL,
        now: new Date(),
      });
      assert.equal(planChanges(again), false);
      assert.deepEqual(await dump(db), before);
    });

    it('a copy that fails half-way leaves the database as it was', async () => {
      const before = await dump(db);
      const broken = source();
      // The strategy definition is not there: the insert of the flag's strategies fails, after
      // the tag type, context field and first flags were written in the same transaction.
      broken.records.tagTypes.set('area', { description: null, icon: null, color: null });
      broken.records.flags.set(
        'zzz-broken',
        flag({
          environments: {
            production: {
              enabled: true,
              variants: [],
              strategies: [
                {
                  name: 'noSuchStrategy',
                  title: null,
                  disabled: false,
                  parameters: {},
                  constraints: [],
                  variants: [],
                  segments: [],
                },
              ],
            },
          },
        }),
      );
      await assert.rejects(
        copyInstance(db, broken, hashes, { publicUrl: PUBLIC_URL, now: new Date() }),
      );
      assert.deepEqual(await dump(db), before);
    });

    it('keeps a password set in flags-server, copies one unleash-server changed since', async () => {
      const [ann] = await db.query<{ id: number }>(
        "SELECT id FROM users WHERE email = 'ann@example.com'",
      );
      // Ann logged in to flags-server: her hash is flags-server's own now.
      await db.query('UPDATE users SET password_hash = $2 WHERE id = $1', [
        ann!.id,
        'scrypt$131072$8$1$c2FsdA$a2V5',
      ]);
      assert.equal(planChanges(await planInstance(db, source(), hashes)), false);
      // Not yet: her password changed in unleash-server since the first copy.
      await db.query('UPDATE users SET password_hash = $2 WHERE id = $1', [ann!.id, ANN_HASH]);
      const changed = bcrypt.hashSync('a newer passphrase', 4);
      const plan = await planInstance(db, source(), new Map([['ann@example.com', changed]]));
      assert.deepEqual(countPlan(plan).users, { create: 0, update: 1, skip: 1 });
      await copyInstance(db, source(), new Map([['ann@example.com', changed]]), {
        publicUrl: PUBLIC_URL,
        now: new Date(),
      });
      const [row] = await db.query<{ password_hash: string }>(
        'SELECT password_hash FROM users WHERE id = $1',
        [ann!.id],
      );
      assert.equal(row?.password_hash, changed);
    });

    it('leaves a token configured with FLAGS_*_TOKENS as configured', async () => {
      await db.query(
        "UPDATE api_tokens SET source = 'config', token_name = 'frontend (configured)' WHERE secret_hash = $1",
        [hashSecret(FRONTEND_SECRET)],
      );
      const plan = await planInstance(db, source(), undefined);
      assert.deepEqual(countPlan(plan).apiTokens, { create: 0, update: 0, skip: 3 });
    });
  });
}

for (const backend of backends) {
  describe(`migrate from-unleash into unleash-server's own database on ${backend.name}`, () => {
    let db: Database;
    let cleanup: () => Promise<void>;

    before(async () => {
      ({ db, cleanup } = await backend.open());
      // What unleash-server's database has and flags-server's never does: its migrator's table
      // and its session store. unleash-server also runs with DATABASE_URL, so it is one mix-up away.
      await db.exec(`CREATE TABLE migrations (id serial PRIMARY KEY, name text, run_on timestamp);
        CREATE TABLE unleash_session (sid text PRIMARY KEY, sess json, expired timestamptz);
        CREATE TABLE projects (id text PRIMARY KEY, name text)`);
    });
    after(() => cleanup());

    for (const [name, run] of [
      ['a dry run', () => planInstance(db, source(), hashes)],
      [
        'a copy',
        () => copyInstance(db, source(), hashes, { publicUrl: PUBLIC_URL, now: new Date() }),
      ],
    ] as const) {
      it(`${name} refuses it, naming DATABASE_URL and --database, and writes nothing`, async () => {
        const before = await dump(db);
        await assert.rejects(run(), (error: Error) => {
          assert.equal(error.name, 'MigrateError');
          assert.match(error.message, /DATABASE_URL is unleash-server's own database/);
          assert.match(error.message, /--database/);
          return true;
        });
        assert.deepEqual(await dump(db), before);
      });
    }

    it("is refused by flags-server's own start too, as a configuration error, creating nothing", async () => {
      const before = await dump(db);
      await assert.rejects(migrate(db), (error: Error) => {
        assert.equal(error.name, 'ConfigError');
        assert.match(error.message, /DATABASE_URL is unleash-server's own database/);
        assert.match(error.message, /migrate from-unleash --database/);
        return true;
      });
      assert.deepEqual(await dump(db), before);
    });
  });
}
