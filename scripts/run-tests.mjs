// Runs every *.test.ts of the workspace with Node's own test runner.
// Node 20 has no glob support for `--test`, so the files are listed here.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const roots = ['packages', 'test'];
const filter = process.argv[2];

function collect(dir, out) {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist' || name === 'fixtures') continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) collect(path, out);
    else if (name.endsWith('.test.ts')) out.push(path);
  }
  return out;
}

const files = roots
  .filter((root) => existsSync(root))
  .flatMap((root) => collect(root, []))
  .filter((file) => !filter || file.includes(filter))
  .sort();
if (files.length === 0) {
  console.error('no test files found');
  process.exit(1);
}
/** The whole run normally takes 2–3 minutes here. */
const RUN_LIMIT_MS = 30 * 60_000;
const result = spawnSync(
  process.execPath,
  [
    '--conditions=source',
    '--import',
    'tsx',
    '--test',
    '--test-concurrency=2',
    // A stuck test or hook fails after this long instead of holding CI until its limit.
    '--test-timeout=180000',
    '--test-reporter=spec',
    // No --test-force-exit: on Node 20 it ends a busy file's process before its last suites have
    // run, and they vanish from the totals instead of failing. A file that leaves a handle open
    // is caught by the run's own limit below.
    ...files,
  ],
  { stdio: 'inherit', timeout: RUN_LIMIT_MS, killSignal: 'SIGKILL' },
);
if (result.error?.code === 'ETIMEDOUT') {
  console.error(
    `the test run took over ${RUN_LIMIT_MS / 60_000} minutes and was stopped (a test file that does not exit?)`,
  );
}
process.exit(result.status ?? 1);
