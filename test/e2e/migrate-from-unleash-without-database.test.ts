import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  createFlagsDatabase,
  migrateCommand,
  rowCounts,
  startFlagsServer,
} from '../helpers/migrate-target.js';
import { buildRichInstance } from '../helpers/unleash-rich-instance.js';
import {
  startUnleashServer,
  UNLEASH_VERSION,
  type UnleashServer,
  unleashServerSkip,
  withClient,
} from '../helpers/unleash-server.js';

/**
 * `flags-server migrate from-unleash` without `--database`: unleash-server's Admin API alone gives
 * no password hashes, so users are created without one and get a link to set it. (The copy with
 * `--database` is migrate-from-unleash.test.ts.)
 */

describe(
  `migrate from-unleash without --database (unleash-server ${UNLEASH_VERSION})`,
  {
    skip: unleashServerSkip,
  },
  () => {
    let unleash: UnleashServer;
    let target: { url: string; drop: () => Promise<void> };

    before(async () => {
      unleash = await startUnleashServer();
      await buildRichInstance(unleash);
      target = await createFlagsDatabase();
    });

    after(async () => {
      await target?.drop();
      await unleash?.stop();
    });

    it('--dry-run on an empty flags-server changes no row and exits 2', async () => {
      // flags-server started once: its schema and defaults, nothing else.
      const started = await startFlagsServer(target.url);
      await started.app.close();
      await started.db.close();
      const before = await rowCounts(target.url);
      const result = await migrateCommand(
        ['from-unleash', '--url', unleash.url, '--token', unleash.adminToken, '--dry-run'],
        target.url,
      );
      assert.equal(result.status, 2, result.output);
      assert.deepEqual(await rowCounts(target.url), before);
    });

    it('creates the users without a password and prints a link for each to set one', async () => {
      const result = await migrateCommand(
        ['from-unleash', '--url', unleash.url, '--token', unleash.adminToken],
        target.url,
        'https://flags.example.com',
      );
      assert.equal(result.status, 0, result.output);
      assert.match(result.out, /passwords \(give --database to copy them\)/);
      const links = [
        ...result.out.matchAll(
          /^ {2}(\S+): (https:\/\/flags\.example\.com\/new-user\?token=\S+)$/gm,
        ),
      ].map((match) => match[1]);
      assert.deepEqual(links.sort(), ['admin', 'alice@example.com', 'bob', 'carol@example.com']);
      const rows = await withClient(
        target.url,
        async (client) =>
          (
            await client.query<{ login: string; password_hash: string | null; role: string }>(
              `SELECT COALESCE(u.email, u.username) AS login, u.password_hash, r.name AS role
                 FROM users u JOIN role_user ru ON ru.user_id = u.id JOIN roles r ON r.id = ru.role_id
                ORDER BY login`,
            )
          ).rows,
      );
      assert.deepEqual(rows, [
        { login: 'admin', password_hash: null, role: 'Admin' },
        { login: 'alice@example.com', password_hash: null, role: 'Admin' },
        { login: 'bob', password_hash: null, role: 'Editor' },
        { login: 'carol@example.com', password_hash: null, role: 'Viewer' },
      ]);
      const again = await migrateCommand(
        ['from-unleash', '--url', unleash.url, '--token', unleash.adminToken, '--dry-run'],
        target.url,
      );
      assert.equal(again.status, 0, again.output);
    });
  },
);
