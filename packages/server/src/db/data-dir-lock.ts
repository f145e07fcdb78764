import { readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../config/load.js';

/** The file in `DATA_DIR` naming the process that has the directory open. */
export const DATA_DIR_LOCK_FILE = 'flags-server.pid';

/**
 * Takes `dir` for this process, or refuses with the process that has it. PGlite takes no lock on
 * its data directory, and two processes writing one (a second flags-server, or `flags-server
 * migrate` beside a running one) damage it for good.
 *
 * The rule is PostgreSQL's for `postmaster.pid`: the file names its process; it is stale when
 * that process is gone, or is this process or its parent (a restarted container numbers its
 * processes from 1 again), and a stale file is taken over. Taking and releasing at once checks
 * that no other process has the directory. Written here rather than with `proper-lockfile`: that
 * library calls a lock stale when its holder misses a heartbeat, which a long synchronous
 * WebAssembly checkpoint can do, and a second writer would then be let in.
 *
 * Process ids are those of this host or container: two containers on one volume both see their
 * own pid 1 and cannot tell each other apart (the docs say to run one).
 *
 * Returns what releases the lock (once the database is closed).
 */
export function lockDataDir(dir: string): () => void {
  const file = join(dir, DATA_DIR_LOCK_FILE);
  const mine = `${process.pid}\n`;
  // Twice: a stale file is removed once, then the directory is taken or someone else took it.
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(file, mine, { flag: 'wx', mode: 0o600 });
      return () => {
        if (readIfAny(file) === mine) unlinkSync(file);
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = Number.parseInt(readIfAny(file) ?? '', 10);
    if (Number.isSafeInteger(holder) && holder > 0 && isRunningElsewhere(holder)) {
      throw new ConfigError([
        `DATA_DIR ${dir} is in use by process ${holder} (a flags-server, or flags-server migrate): PGlite lets one process at a time open it. Stop that process first, or use PostgreSQL (DATABASE_URL) for several; if no such process runs, remove ${file}`,
      ]);
    }
    try {
      unlinkSync(file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  throw new ConfigError([
    `DATA_DIR ${dir} was taken by another process while flags-server was opening it`,
  ]);
}

function readIfAny(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** Whether `pid` is a running process other than this one and its parent. */
function isRunningElsewhere(pid: number): boolean {
  if (pid === process.pid || pid === process.ppid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
