// Runs every *.test.ts of the workspace with Node's own test runner.
// Node 20 has no glob support for `--test`, so the files are listed here.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

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

/**
 * Slow end-to-end suites (processes killed and restarted, thousands of generated requests) say so
 * in their first lines; CI runs them on one Node.js line only and sets TESTS_ONCE_RUN there on the
 * others (.ci/run), where this run leaves them out and says which.
 */
const ONCE_MARK = '// test-runs: once';
const isOnce = (file) => readFileSync(file, 'utf8').slice(0, 2000).includes(ONCE_MARK);

const selected = roots
  .filter((root) => existsSync(root))
  .flatMap((root) => collect(root, []))
  .filter((file) => !filter || file.includes(filter))
  .sort();
const leftOut = process.env.TESTS_ONCE_RUN ? selected.filter(isOnce) : [];
const files = selected.filter((file) => !leftOut.includes(file));
if (leftOut.length > 0) {
  console.log(
    `${leftOut.length} slow end-to-end file(s) not run here (TESTS_ONCE_RUN: run on another Node.js line): ${leftOut.join(', ')}`,
  );
}
if (files.length === 0) {
  console.error('no test files found');
  process.exit(1);
}
/** The whole run normally takes 10 minutes here. */
const RUN_LIMIT_MS = 30 * 60_000;

/** Runs the files with Node's test runner; resolves to its exit status and the failures seen. */
function run(testFiles) {
  const failuresFile = join(mkdtempSync(join(tmpdir(), 'flags-tests-')), 'failures.jsonl');
  const result = spawnSync(
    process.execPath,
    [
      '--conditions=source',
      '--import',
      'tsx',
      '--test',
      '--test-concurrency=2',
      // A stuck test or hook fails after this long instead of holding CI until its limit. The
      // limit holds for a whole file too (each file is a test of the run): a slow end-to-end file
      // on two busy cores takes up to twice what it takes alone.
      '--test-timeout=240000',
      '--test-reporter=spec',
      '--test-reporter-destination=stdout',
      `--test-reporter=${fileURLToPath(new URL('./test-failures-reporter.mjs', import.meta.url))}`,
      `--test-reporter-destination=${failuresFile}`,
      // No --test-force-exit: on Node 20 it ends a busy file's process before its last suites have
      // run, and they vanish from the totals instead of failing. A file that leaves a handle open
      // is caught by the run's own limit below.
      ...testFiles,
    ],
    { stdio: 'inherit', timeout: RUN_LIMIT_MS, killSignal: 'SIGKILL' },
  );
  if (result.error?.code === 'ETIMEDOUT') {
    console.error(
      `the test run took over ${RUN_LIMIT_MS / 60_000} minutes and was stopped (a test file that does not exit?)`,
    );
  }
  const failures = existsSync(failuresFile)
    ? readFileSync(failuresFile, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line))
    : [];
  return { status: result.status ?? 1, failures };
}

const first = run(files);
// A file whose process died of a signal while no test anywhere failed is a crash of the runtime
// itself (seen once: a V8 check in WebAssembly code memory on Node 24, with PGlite). That file is
// run once more and the crash is reported; a test that fails is never run again.
const crashed = [...new Set(first.failures.filter((f) => f.signal).map((f) => f.file))];
const onlyCrashes =
  first.status !== 0 &&
  crashed.length > 0 &&
  first.failures.every((failure) => crashed.includes(failure.file));
if (!onlyCrashes) process.exit(first.status);
for (const failure of first.failures.filter((f) => f.signal)) {
  console.error(
    `\nthe process of ${failure.file} died of ${failure.signal}, not of a failing test; running it once more`,
  );
}
const again = run(crashed);
console.error(
  again.status === 0
    ? `the rerun passed; the crash above is reported, not hidden (${crashed.length} file(s))`
    : 'the rerun failed too',
);
process.exit(again.status);
