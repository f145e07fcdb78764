import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { type Database, generateContexts } from '@flags/server';
import type { FastifyInstance } from 'fastify';
import { InMemStorageProvider, Unleash } from 'unleash-client';
import {
  createFlagsDatabase,
  databaseUrl,
  migrateCommand,
  rowCounts,
  startFlagsServer,
  tableCount,
} from '../helpers/migrate-target.js';
import { buildRichInstance, type RichInstance, settle } from '../helpers/unleash-rich-instance.js';
import { startFrontendSdk, stopSdk } from '../helpers/unleash-sdk.js';
import {
  startUnleashServer,
  UNLEASH_VERSION,
  type UnleashServer,
  unleashServerSkip,
} from '../helpers/unleash-server.js';

/**
 * `flags-server migrate from-unleash` and `migrate verify` against the real unleash-server: a
 * rich instance is built through its Admin API, copied into a flags-server database on
 * PostgreSQL, and flags-server, started on it, must answer every SDK with the old tokens as
 * unleash-server does, let every user log in with their old password, and a second run must find
 * nothing to do.
 */

const CONTEXTS = 1000;

/** A generated context as SDKs take it. */
function sdkContext(query: URLSearchParams) {
  const properties: Record<string, string> = {};
  for (const [key, value] of query) {
    const match = /^properties\[(.+)\]$/.exec(key);
    if (match) properties[match[1] as string] = value;
  }
  return {
    ...(query.has('userId') ? { userId: query.get('userId') as string } : {}),
    ...(query.has('sessionId') ? { sessionId: query.get('sessionId') as string } : {}),
    remoteAddress: '127.0.0.1',
    properties,
  };
}

const CONTEXT_FIELDS = [
  { name: 'plan', legalValues: ['free', 'pro', 'enterprise'], stickiness: true },
  { name: 'age', legalValues: [] },
  { name: 'version', legalValues: [] },
];

describe(
  `migrate from-unleash against unleash-server ${UNLEASH_VERSION}`,
  {
    skip: unleashServerSkip,
  },
  () => {
    let unleash: UnleashServer;
    let rich: RichInstance;
    let target: { url: string; drop: () => Promise<void> };
    let flags: { app: FastifyInstance; db: Database; url: string } | undefined;
    const unleashDatabase = () => databaseUrl(unleash.database);
    const from = (...extra: string[]) => [
      'from-unleash',
      '--url',
      unleash.url,
      '--token',
      unleash.adminToken,
      ...extra,
    ];

    before(async () => {
      unleash = await startUnleashServer();
      rich = await buildRichInstance(unleash);
      target = await createFlagsDatabase();
    });

    after(async () => {
      await flags?.app.close();
      await flags?.db.close();
      await target?.drop();
      await unleash?.stop();
    });

    it('--dry-run on a database flags-server never started on writes nothing (not even its schema) and exits 2', async () => {
      const result = await migrateCommand(
        from('--dry-run', '--database', unleashDatabase()),
        target.url,
      );
      assert.equal(result.status, 2, result.output);
      assert.match(result.out, /Plan \(dry run, nothing written\)/);
      assert.match(
        result.out,
        new RegExp(`flags\\s+${rich.flags.length + rich.archived.length}\\s+0\\s+0\\n`),
      );
      assert.match(result.out, /users\s+4\s+0\s+0\n/);
      assert.equal(await tableCount(target.url), 0);
    });

    it('refuses bad input with a message naming it, writing nothing', async () => {
      const closed = createServer();
      closed.listen(0, '127.0.0.1');
      await once(closed, 'listening');
      const closedPort = (closed.address() as AddressInfo).port;
      closed.close();
      // An unleash-server without the search endpoint (as one older than the command needs).
      const old: Server = createServer(async (request, response) => {
        if (request.url?.startsWith('/api/admin/search/')) {
          response.writeHead(404, { 'content-type': 'application/json' });
          response.end(JSON.stringify({ name: 'NotFoundError', message: 'not available' }));
          return;
        }
        const chunks: Buffer[] = [];
        for await (const chunk of request) chunks.push(chunk as Buffer);
        const upstream = await fetch(`${unleash.url}${request.url}`, {
          method: request.method,
          headers: {
            authorization: String(request.headers.authorization),
            'content-type': 'application/json',
          },
          ...(chunks.length > 0 ? { body: Buffer.concat(chunks) } : {}),
        });
        response.writeHead(upstream.status, { 'content-type': 'application/json' });
        response.end(await upstream.text());
      });
      old.listen(0, '127.0.0.1');
      await once(old, 'listening');
      const oldUrl = `http://127.0.0.1:${(old.address() as AddressInfo).port}`;
      try {
        const cases: [string, string[], RegExp][] = [
          [
            'an unreachable URL',
            [
              'from-unleash',
              '--url',
              `http://127.0.0.1:${closedPort}`,
              '--token',
              unleash.adminToken,
            ],
            /cannot reach unleash-server at http:\/\/127\.0\.0\.1:\d+\/ \(ECONNREFUSED\)/,
          ],
          [
            'a client token',
            ['from-unleash', '--url', unleash.url, '--token', rich.clientTokens[0] as string],
            /refused .*this token \(40[13]\)|refused the token \(401\)/,
          ],
          [
            'an unleash-server without an endpoint the copy needs',
            ['from-unleash', '--url', oldUrl, '--token', unleash.adminToken],
            /has no GET \/api\/admin\/search\/features\?.* \(404\): the copy needs unleash-server 6, 7 or 8/,
          ],
          [
            'a database without unleash-server users',
            [...from('--database', databaseUrl('postgres'))],
            /--database .*\/postgres has no users table with password_hash: it is not unleash-server's database/,
          ],
        ];
        for (const [what, args, message] of cases) {
          const result = await migrateCommand(args, target.url);
          assert.equal(result.status, 1, `${what}: ${result.output}`);
          assert.match(result.err, message, what);
          assert.match(result.err, /nothing was written\n$/, what);
          assert.equal(await tableCount(target.url), 0, `${what}: nothing written`);
        }
      } finally {
        old.close();
      }
    });

    it('copies the whole instance with --database, then flags-server serves it', async () => {
      const result = await migrateCommand(from('--database', unleashDatabase()), target.url);
      assert.equal(result.status, 0, result.output);
      assert.match(result.out, /Copied:/);
      assert.match(result.out, new RegExp(`API tokens\\s+${rich.tokenCount}\\s+0\\s+0\\n`));
      assert.match(result.out, /segments\s+2\s+0\s+0\n/);
      assert.match(result.out, /custom strategies\s+1\s+0\s+0\n/);
      assert.doesNotMatch(result.out, /set one/, 'no password links: the hashes were copied');
      assert.match(result.out, /Not copied:\n(.|\n)*metrics/);
      flags = await startFlagsServer(target.url);
    });

    it(`unleash-client with each old client token evaluates ${CONTEXTS} contexts as from unleash-server`, async () => {
      const contexts = generateContexts(CONTEXTS, CONTEXT_FIELDS).map(sdkContext);
      for (const token of rich.clientTokens) {
        const sdk = (url: string) => {
          const client = new Unleash({
            url: `${url}/api/`,
            appName: 'migrate-e2e',
            customHeaders: { Authorization: token },
            refreshInterval: 60_000,
            disableMetrics: true,
            storageProvider: new InMemStorageProvider(),
            skipInstanceCountWarning: true,
          });
          client.on('error', () => {});
          return client;
        };
        const theirs = sdk(unleash.url);
        const ours = sdk(flags!.url);
        try {
          await Promise.all([once(theirs, 'synchronized'), once(ours, 'synchronized')]);
          const names = theirs
            .getFeatureToggleDefinitions()
            .map((feature) => feature.name)
            .sort();
          assert.ok(names.length >= 40, `${names.length} flags`);
          assert.deepEqual(
            ours
              .getFeatureToggleDefinitions()
              .map((feature) => feature.name)
              .sort(),
            names,
          );
          let enabled = 0;
          for (const context of contexts) {
            for (const name of names) {
              const a = {
                on: theirs.isEnabled(name, context),
                variant: theirs.getVariant(name, context),
              };
              const b = {
                on: ours.isEnabled(name, context),
                variant: ours.getVariant(name, context),
              };
              assert.deepEqual(b, a, `${name} for ${JSON.stringify(context)}`);
              if (a.on) enabled++;
            }
          }
          assert.ok(enabled > 0 && enabled < contexts.length * names.length, 'some on, some off');
        } finally {
          stopSdk(theirs);
          stopSdk(ours);
        }
      }
    });

    it(`unleash-proxy-client with each old frontend token gets unleash-server's answers for ${CONTEXTS} contexts`, async () => {
      const contexts = generateContexts(CONTEXTS, CONTEXT_FIELDS, 7).map(sdkContext);
      for (const token of rich.frontendTokens) {
        const sdk = (url: string) =>
          startFrontendSdk({
            url: `${url}/api/frontend`,
            clientKey: token,
            appName: 'migrate-e2e-web',
          });
        const [theirs, ours] = await Promise.all([sdk(unleash.url), sdk(flags!.url)]);
        try {
          let toggles = 0;
          for (const context of contexts) {
            await Promise.all([
              theirs.client.updateContext(context),
              ours.client.updateContext(context),
            ]);
            const a = theirs.client.getAllToggles().sort((x, y) => x.name.localeCompare(y.name));
            const b = ours.client.getAllToggles().sort((x, y) => x.name.localeCompare(y.name));
            assert.deepEqual(b, a, JSON.stringify(context));
            toggles += a.length;
          }
          assert.ok(toggles > 0, 'some flags on');
        } finally {
          await Promise.all([theirs.stop(), ours.stop()]);
        }
      }
    });

    it('every user logs in with their old password and has their role', async () => {
      for (const user of rich.users) {
        const login = await fetch(`${flags!.url}/auth/simple/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ username: user.login, password: user.password }),
        });
        assert.equal(login.status, 200, `${user.login}: ${await login.clone().text()}`);
        const cookie = login.headers
          .getSetCookie()
          .map((header) => header.split(';')[0])
          .join('; ');
        const me = (await (
          await fetch(`${flags!.url}/api/admin/user`, { headers: { cookie } })
        ).json()) as { user: { rootRole: number } };
        const roles = (await (
          await fetch(`${flags!.url}/api/admin/user-admin`, {
            headers: { authorization: unleash.adminToken },
          })
        ).json()) as { rootRoles: { id: number; name: string }[] };
        const role = roles.rootRoles.find((entry) => entry.id === me.user.rootRole)?.name;
        assert.equal(role, user.role, user.login);
        const wrong = await fetch(`${flags!.url}/auth/simple/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ username: user.login, password: `${user.password}x` }),
        });
        assert.equal(wrong.status, 401);
      }
      // The hashes were rewritten with flags-server's own scheme at those logins.
      const hashes = await flags!.db.query<{ password_hash: string }>(
        "SELECT password_hash FROM users WHERE email IN ('alice@example.com', 'carol@example.com') OR username = 'bob'",
      );
      assert.equal(hashes.length, 3);
      for (const { password_hash } of hashes) assert.match(password_hash, /^scrypt\$/);
    });

    it('migrate verify finds the same answers with every token and exits 0', async () => {
      const result = await migrateCommand(
        ['verify', '--url', unleash.url, '--token', unleash.adminToken, '--flags-url', flags!.url],
        target.url,
      );
      assert.equal(result.status, 0, result.output);
      assert.match(result.out, /7 tokens?|tokens, \d+ comparisons, 0 differences/);
      assert.match(
        result.out,
        new RegExp(`${rich.tokenCount - 1} tokens, \\d+ comparisons, 0 differences`),
      );
    });

    it('a second --dry-run exits 0, and a second run writes nothing', async () => {
      const before = await rowCounts(target.url);
      const dry = await migrateCommand(
        from('--dry-run', '--database', unleashDatabase()),
        target.url,
      );
      assert.equal(dry.status, 0, dry.output);
      const again = await migrateCommand(from('--database', unleashDatabase()), target.url);
      assert.equal(again.status, 0, again.output);
      assert.match(again.out, /flags\s+0\s+0\s+\d+\n/);
      assert.deepEqual(await rowCounts(target.url), before);
    });

    it('refuses the database of another instance as --database before reading the instance, writing nothing', async () => {
      const before = await rowCounts(target.url);
      // The command's requests to unleash-server, seen through the fetch it makes them with.
      const asked: string[] = [];
      const fetchAsBefore = globalThis.fetch;
      globalThis.fetch = (input, init) => {
        const url = input instanceof Request ? input.url : String(input);
        if (url.startsWith(unleash.url)) asked.push(new URL(url).pathname);
        return fetchAsBefore(input, init);
      };
      let result: Awaited<ReturnType<typeof migrateCommand>>;
      try {
        result = await migrateCommand(from('--database', target.url), target.url);
      } finally {
        globalThis.fetch = fetchAsBefore;
      }
      assert.equal(result.status, 1, result.output);
      assert.match(result.err, /is not the database of the unleash-server at --url/);
      assert.deepEqual(asked, ['/api/admin/user-admin', '/api/admin/ui-config']);
      assert.deepEqual(await rowCounts(target.url), before);
    });

    it('a final run copies only what changed in unleash-server since, and flags-server serves it', async () => {
      await fetch(
        `${unleash.url}/api/admin/projects/default/features/mixed-0/environments/production/on`,
        { method: 'POST', headers: { authorization: unleash.adminToken } },
      );
      await settle(unleash, rich.frontendTokens);
      const dry = await migrateCommand(
        from('--dry-run', '--database', unleashDatabase()),
        target.url,
      );
      assert.equal(dry.status, 2, dry.output);
      // The settle probe (created, then deleted) leaves nothing behind; mixed-0 is the change.
      assert.match(dry.out, /flags\s+0\s+1\s+\d+\n/);
      assert.match(dry.out, /flags: update mixed-0\n/);
      const run = await migrateCommand(from('--database', unleashDatabase()), target.url);
      assert.equal(run.status, 0, run.output);
      const verify = await migrateCommand(
        [
          'verify',
          '--url',
          unleash.url,
          '--token',
          unleash.adminToken,
          '--flags-url',
          flags!.url,
          '--contexts',
          '50',
        ],
        target.url,
      );
      assert.equal(verify.status, 0, verify.output);
    });
  },
);
