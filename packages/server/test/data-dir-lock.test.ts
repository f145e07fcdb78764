import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runEntry } from '../../../test/helpers/processes.js';
import { ConfigError } from '../src/config/load.js';
import { DATA_DIR_LOCK_FILE, lockDataDir } from '../src/db/data-dir-lock.js';
import { openDatabase } from '../src/db/open.js';
import { ADMIN_TOKEN } from './helpers.js';
import { spawnServer } from './server-process.js';

/**
 * PGlite's data directory is one process's at a time: a second flags-server, or a migrate, on a
 * directory a running flags-server has open is refused instead of damaging it.
 */

const MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url));
const dirs: string[] = [];
function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'flags-lock-'));
  dirs.push(dir);
  return dir;
}
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A process that runs until killed: its id is a live one of another process. */
async function otherProcess() {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], {
    stdio: 'ignore',
  });
  await once(child, 'spawn');
  return child;
}

describe('the PGlite data directory lock', () => {
  it('names this process in the directory, and removes the file when released', () => {
    const dir = dataDir();
    const release = lockDataDir(dir);
    assert.equal(readFileSync(join(dir, DATA_DIR_LOCK_FILE), 'utf8'), `${process.pid}\n`);
    release();
    assert.equal(existsSync(join(dir, DATA_DIR_LOCK_FILE)), false);
  });

  it('refuses a directory a running process holds, naming the process and the file, and leaves its file', async () => {
    const dir = dataDir();
    const holder = await otherProcess();
    try {
      writeFileSync(join(dir, DATA_DIR_LOCK_FILE), `${holder.pid}\n`);
      assert.throws(
        () => lockDataDir(dir),
        (error: unknown) =>
          error instanceof ConfigError &&
          error.message.includes(`DATA_DIR ${dir} is in use by process ${holder.pid}`) &&
          error.message.includes(`remove ${join(dir, DATA_DIR_LOCK_FILE)}`),
      );
      assert.equal(readFileSync(join(dir, DATA_DIR_LOCK_FILE), 'utf8'), `${holder.pid}\n`);
    } finally {
      holder.kill('SIGKILL');
    }
  });

  it('takes over the file of a process that is gone, of itself (a restarted container) and an unreadable one', async () => {
    const gone = await otherProcess();
    gone.kill('SIGKILL');
    await once(gone, 'exit');
    for (const stale of [`${gone.pid}\n`, `${process.pid}\n`, 'not a process id', '']) {
      const dir = dataDir();
      writeFileSync(join(dir, DATA_DIR_LOCK_FILE), stale);
      const release = lockDataDir(dir);
      assert.equal(
        readFileSync(join(dir, DATA_DIR_LOCK_FILE), 'utf8'),
        `${process.pid}\n`,
        JSON.stringify(stale),
      );
      release();
    }
  });

  it('release leaves a file that names another process', async () => {
    const dir = dataDir();
    const release = lockDataDir(dir);
    writeFileSync(join(dir, DATA_DIR_LOCK_FILE), '1\n');
    release();
    assert.equal(readFileSync(join(dir, DATA_DIR_LOCK_FILE), 'utf8'), '1\n');
  });

  it('is held by an open database and released by its close; an in-memory one takes none', async () => {
    const dir = dataDir();
    const db = await openDatabase({ databaseUrl: undefined, dataDir: dir });
    assert.equal(readFileSync(join(dir, DATA_DIR_LOCK_FILE), 'utf8'), `${process.pid}\n`);
    await db.close();
    assert.equal(existsSync(join(dir, DATA_DIR_LOCK_FILE)), false);
    const again = await openDatabase({ databaseUrl: undefined, dataDir: dir });
    await again.close();
    const memory = await openDatabase({ databaseUrl: undefined, dataDir: undefined });
    await memory.close();
  });

  it('a second flags-server and a migrate on a running flags-server’s DATA_DIR exit 1 with one line, and the first serves on', async () => {
    const dir = dataDir();
    const first = await spawnServer({ DATA_DIR: dir });
    try {
      const pid = first.child.pid;
      const second = await runEntry(MAIN, [], {
        DATA_DIR: dir,
        SERVER_PORT: '0',
        SERVER_HOST: '127.0.0.1',
        FLAGS_ADMIN_TOKENS: ADMIN_TOKEN,
      });
      assert.equal(second.status, 1, second.output);
      assert.equal(
        second.output.trim(),
        `invalid configuration:\n  DATA_DIR ${dir} is in use by process ${pid} (a flags-server, or flags-server migrate): PGlite lets one process at a time open it. Stop that process first, or use PostgreSQL (DATABASE_URL) for several; if no such process runs, remove ${join(dir, DATA_DIR_LOCK_FILE)}`,
      );
      const migrate = await runEntry(
        MAIN,
        ['migrate', 'from-unleash', '--url', 'http://127.0.0.1:9', '--token', 'x'],
        { DATA_DIR: dir },
      );
      assert.equal(migrate.status, 1, migrate.output);
      assert.match(
        migrate.output,
        new RegExp(
          `^flags-server migrate from-unleash: cannot open flags-server's database: DATA_DIR ${dir} is in use by process ${pid} .*; nothing was written\n$`,
        ),
      );
      const health = await fetch(`${first.base}/health`);
      assert.equal(health.status, 200);
    } finally {
      first.child.kill('SIGTERM');
      assert.equal(await first.exited, 0, first.output());
    }
    assert.equal(existsSync(join(dir, DATA_DIR_LOCK_FILE)), false, 'released at shutdown');
  });
});
