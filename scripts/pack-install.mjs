// Installs flags as its users get it: builds the workspace, packs every package with `npm pack`
// and installs the tarballs, without dev dependencies, into an empty folder.
//
//   node scripts/pack-install.mjs <empty folder>
//
// The folder then holds `package.json`, `package-lock.json`, the tarballs in `packages/` and
// `node_modules/.bin/flags-proxy` and `flags-server`. Every dependency is installed at the version
// the workspace's package-lock.json holds, the versions the tests ran with: the folder's lockfile
// is made from the workspace's, and `npm ci` installs it. The container image (Dockerfile) runs this
// script, and test/e2e/packed-install.test.ts runs it too, so what the image installs is what a
// test starts and talks to.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
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

/** Packs every workspace package into `destination`; returns npm's record of each tarball. */
function packWorkspaces(destination) {
  return JSON.parse(
    npm(['pack', '--workspaces', '--json', '--pack-destination', destination], ROOT),
  );
}

/**
 * The install folder's lockfile, made from the workspace's: the workspace packages become their
 * tarballs, and every package they need at run time (found as Node.js resolves it: the nearest
 * `node_modules` first) keeps the version, source and integrity the workspace locked. Dev-only
 * packages are left out by never being reached.
 */
export function installLock(workspaceLock, tarballs) {
  const locked = workspaceLock.packages;
  const byFolder = new Map(tarballs.map((tarball) => [tarball.folder, tarball]));
  /** A workspace folder's place in the install folder. */
  const placeOf = (location) => {
    for (const [folder, tarball] of byFolder) {
      if (location === folder) return `node_modules/${tarball.name}`;
      if (location.startsWith(`${folder}/`)) {
        return `node_modules/${tarball.name}${location.slice(folder.length)}`;
      }
    }
    return location;
  };
  /** Where `name`, needed by the package at `location`, is found: Node.js's lookup, upwards. */
  const resolveFrom = (location, name) => {
    let base = location;
    for (;;) {
      const candidate = `${base ? `${base}/` : ''}node_modules/${name}`;
      const entry = locked[candidate];
      if (entry) return entry.link ? entry.resolved : candidate;
      if (!base) return undefined;
      const parent = base.lastIndexOf('/node_modules/');
      base = parent === -1 ? '' : base.slice(0, parent);
    }
  };
  const packages = {
    '': {
      name: 'flags-install',
      dependencies: Object.fromEntries(
        tarballs.map((tarball) => [tarball.name, `file:${TARBALLS}/${tarball.filename}`]),
      ),
    },
  };
  const pending = tarballs.map((tarball) => tarball.folder);
  const seen = new Set();
  while (pending.length > 0) {
    const location = pending.pop();
    if (seen.has(location)) continue;
    seen.add(location);
    const entry = locked[location];
    if (!entry) throw new Error(`the workspace lockfile has no ${location}: run npm install`);
    const tarball = byFolder.get(location);
    const { name: _name, dev: _dev, devOptional: _devOptional, peer: _peer, ...kept } = entry;
    packages[placeOf(location)] = tarball
      ? { ...kept, resolved: `file:${TARBALLS}/${tarball.filename}`, integrity: tarball.integrity }
      : kept;
    const needed = {
      ...entry.dependencies,
      ...entry.optionalDependencies,
      ...Object.fromEntries(
        Object.entries(entry.peerDependencies ?? {}).filter(
          ([name]) => !entry.peerDependenciesMeta?.[name]?.optional,
        ),
      ),
    };
    for (const name of Object.keys(needed)) {
      const found = resolveFrom(location, name);
      if (found) pending.push(found);
      else if (!entry.optionalDependencies?.[name]) {
        throw new Error(`the workspace lockfile has no ${name} for ${location}: run npm install`);
      }
    }
  }
  return { name: 'flags-install', lockfileVersion: 3, requires: true, packages };
}

export function packInstall(target) {
  if (existsSync(target) && readdirSync(target).length > 0) {
    throw new Error(`${target} is not empty: give an empty or new folder`);
  }
  mkdirSync(resolve(target, TARBALLS), { recursive: true });
  npm(['run', 'build'], ROOT);
  const workspaceLock = JSON.parse(readFileSync(resolve(ROOT, 'package-lock.json'), 'utf8'));
  const tarballs = packWorkspaces(resolve(target, TARBALLS)).map((packed) => ({
    ...packed,
    folder: workspaceLock.packages[`node_modules/${packed.name}`]?.resolved,
  }));
  const lock = installLock(workspaceLock, tarballs);
  writeFileSync(
    resolve(target, 'package.json'),
    `${JSON.stringify({ name: 'flags-install', private: true, dependencies: lock.packages[''].dependencies }, null, 2)}\n`,
  );
  writeFileSync(resolve(target, 'package-lock.json'), `${JSON.stringify(lock, null, 2)}\n`);
  // The packages' dependencies on each other (by version) are met by the tarballs themselves,
  // everything else comes from the registry (or npm's cache) at the locked version.
  npm(['ci', '--omit=dev', '--no-audit', '--no-fund', '--no-update-notifier'], target);
  return tarballs.map((tarball) => tarball.filename);
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
