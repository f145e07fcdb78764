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
    // A file whose tests finished but left a handle open must not hang the run.
    '--test-force-exit',
    '--test-reporter=spec',
    ...files,
  ],
  { stdio: 'inherit' },
);
process.exit(result.status ?? 1);
