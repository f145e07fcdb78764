// Installs flags as its users get it: builds the workspace, packs every package with `npm pack`
// and installs the tarballs, without dev dependencies, into an empty folder.
//
//   node scripts/pack-install.mjs <empty folder>
//
// The folder then holds `package.json`, `package-lock.json`, the tarballs in `packages/` and
// `node_modules/.bin/flags-proxy` and `flags-server`. The container image (Dockerfile) runs this
// script, and test/e2e/packed-install.test.ts runs it too, so what the image installs is what a
// test starts and talks to.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** Where the tarballs go inside the install folder; `package.json` names them from there. */
const TARBALLS = 'packages';

/**
 * The environment for npm without the `npm_*` variables of an npm that started this script
 * (`npm test`): they would carry that run's settings (workspace, prefix) into the install.
 */
function cleanEnv() {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)));
}

function npm(args, cwd) {
  const stdout = execFileSync('npm', args, {
    cwd,
    env: cleanEnv(),
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 64 * 1024 * 1024,
  });
  return stdout;
}

/** Packs every workspace package into `destination`; returns the tarballs' file names. */
function packWorkspaces(destination) {
  const packed = JSON.parse(
    npm(['pack', '--workspaces', '--json', '--pack-destination', destination], ROOT),
  );
  return packed.map((entry) => entry.filename);
}

export function packInstall(target) {
  if (existsSync(target) && readdirSync(target).length > 0) {
    throw new Error(`${target} is not empty: give an empty or new folder`);
  }
  mkdirSync(resolve(target, TARBALLS), { recursive: true });
  npm(['run', 'build'], ROOT);
  const tarballs = packWorkspaces(resolve(target, TARBALLS));
  writeFileSync(
    resolve(target, 'package.json'),
    `${JSON.stringify({ name: 'flags-install', private: true }, null, 2)}\n`,
  );
  // One install of all tarballs: the packages' dependencies on each other (by version) are met by
  // the tarballs themselves, everything else comes from the registry.
  npm(
    [
      'install',
      '--omit=dev',
      '--no-audit',
      '--no-fund',
      '--no-update-notifier',
      ...tarballs.map((file) => `./${TARBALLS}/${file}`),
    ],
    target,
  );
  return tarballs;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const target = process.argv[2];
  if (!target) {
    process.stderr.write('usage: node scripts/pack-install.mjs <empty folder>\n');
    process.exit(2);
  }
  try {
    const tarballs = packInstall(resolve(target));
    process.stdout.write(`installed ${tarballs.join(', ')} into ${resolve(target)}\n`);
  } catch (error) {
    process.stderr.write(`pack-install: ${error instanceof Error ? error.message : error}\n`);
    process.exit(1);
  }
}
