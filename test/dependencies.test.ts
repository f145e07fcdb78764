import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

const root = new URL('..', import.meta.url).pathname;

/** Every `.ts` file below `dir`. */
function sources(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) sources(path, out);
    else if (name.endsWith('.ts')) out.push(path);
  }
  return out;
}

/**
 * The packages named in `import … from '…'`, `export … from '…'`, `import('…')` and `require('…')`
 * (a `createRequire` for CommonJS packages without types).
 */
function importedPackages(text: string): Set<string> {
  const found = new Set<string>();
  for (const match of text.matchAll(/(?:from\s+|import\s*\(\s*|require\(\s*)'([^'.][^']*)'/g)) {
    const specifier = match[1]!;
    if (specifier.startsWith('node:')) continue;
    const parts = specifier.split('/');
    found.add(specifier.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!);
  }
  return found;
}

/** Run-time dependencies that code loads by name rather than imports, and why. */
const LOADED_BY_NAME: Readonly<Record<string, string>> = {
  // flags-server's human-readable logs: pino loads it as a transport target (`JSON_LOGGER=false`).
  'pino-pretty': 'packages/server',
};

// A dependency nobody imports goes: each package's run-time dependencies are imported by its src/.
describe('run-time dependencies', () => {
  for (const name of readdirSync(join(root, 'packages'))) {
    const dir = join(root, 'packages', name);
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
      dependencies?: Record<string, string>;
    };
    it(`of packages/${name} are each imported by its src/`, () => {
      const imported = new Set<string>();
      for (const file of sources(join(dir, 'src'))) {
        for (const pkg of importedPackages(readFileSync(file, 'utf8'))) imported.add(pkg);
      }
      const unused = Object.keys(manifest.dependencies ?? {}).filter(
        (dep) => !imported.has(dep) && LOADED_BY_NAME[dep] !== `packages/${name}`,
      );
      assert.deepEqual(unused, []);
    });
  }
});

/**
 * The workspace packages each package may use (DESIGN.md): schemas ← config, engine ← serving ←
 * proxy, server. No service uses the other; they speak HTTP only, and so does the `flags` command
 * (cli), which must work against unleash-server too: it shares the wire shapes (schemas) and the
 * option machinery (config), no service code.
 */
const ALLOWED_WORKSPACE_DEPENDENCIES: Readonly<Record<string, readonly string[]>> = {
  schemas: [],
  config: ['@flags/schemas'],
  engine: ['@flags/schemas'],
  serving: ['@flags/config', '@flags/engine', '@flags/schemas'],
  proxy: ['@flags/config', '@flags/engine', '@flags/schemas', '@flags/serving'],
  server: ['@flags/config', '@flags/engine', '@flags/schemas', '@flags/serving'],
  cli: ['@flags/config', '@flags/schemas'],
};

describe('workspace dependencies point one way', () => {
  it('lists every package', () => {
    assert.deepEqual(
      readdirSync(join(root, 'packages')).sort(),
      Object.keys(ALLOWED_WORKSPACE_DEPENDENCIES).sort(),
    );
  });
  for (const [name, allowed] of Object.entries(ALLOWED_WORKSPACE_DEPENDENCIES)) {
    const dir = join(root, 'packages', name);
    it(`packages/${name} names and imports only ${allowed.join(', ') || 'no workspace package'}`, () => {
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
        dependencies?: Record<string, string>;
        devDependencies?: Record<string, string>;
      };
      const named = Object.keys({ ...manifest.dependencies, ...manifest.devDependencies }).filter(
        (dep) => dep.startsWith('@flags/'),
      );
      assert.deepEqual(
        named.filter((dep) => !allowed.includes(dep)),
        [],
        'package.json',
      );
      const imported = new Set<string>();
      for (const file of sources(join(dir, 'src'))) {
        for (const pkg of importedPackages(readFileSync(file, 'utf8'))) {
          if (pkg.startsWith('@flags/') && !allowed.includes(pkg))
            imported.add(`${pkg} in ${file}`);
        }
      }
      assert.deepEqual([...imported], [], 'imports');
    });
  }
});
