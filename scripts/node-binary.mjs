// Prints the path of a Node.js binary of the given major version (`node scripts/node-binary.mjs 22`).
// The npm registry ships Node binaries as packages (node-linux-<arch>@<major>); each is fetched
// once into a cache directory and reused. CI runs the suite on these, and the tests that start
// unleash-server (which needs Node >= 22) run it on one when the current Node is older.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

const major = process.argv[2];
if (!/^\d+$/.test(major ?? '')) {
  console.error('usage: node scripts/node-binary.mjs <major>');
  process.exit(2);
}

const cache =
  process.env.NODE_CACHE ??
  join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'flags-ci', 'node');
const dir = join(cache, major);
const binary = join(dir, 'bin', 'node');

if (!existsSync(binary)) {
  const arch = process.arch; // x64 or arm64, as the package names spell them
  rmSync(dir, { recursive: true, force: true }); // a directory without bin/node is a broken fetch
  // Unpacked beside the target and renamed into place, so two processes fetching at once never
  // see a half-written directory (the loser of the rename throws its copy away).
  const staging = `${dir}.${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  try {
    execFileSync('npm', ['pack', '--silent', `node-linux-${arch}@${major}`], {
      cwd: staging,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const tarball = readdirSync(staging).find((name) => name.endsWith('.tgz'));
    if (tarball === undefined)
      throw new Error(`npm pack node-linux-${arch}@${major} gave no tarball`);
    execFileSync('tar', ['xzf', tarball, '--strip-components=1'], { cwd: staging });
    rmSync(join(staging, tarball));
    if (!existsSync(join(staging, 'bin', 'node'))) {
      throw new Error(`node-linux-${arch}@${major} has no bin/node`);
    }
    try {
      renameSync(staging, dir);
    } catch (error) {
      if (!existsSync(binary)) throw error;
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}
console.log(binary);
