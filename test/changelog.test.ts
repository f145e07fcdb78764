import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

const root = new URL('../', import.meta.url);

// A database migration changes every deployment that upgrades: each one is in the upgrade notes.
describe('CHANGELOG.md', () => {
  const changelog = readFileSync(new URL('CHANGELOG.md', root), 'utf8');

  it('has an Unreleased section with upgrade notes', () => {
    assert.match(changelog, /^## \[Unreleased\]$/m);
    assert.match(changelog, /^### Upgrade notes$/m);
  });

  it('lists every database migration in the upgrade notes', () => {
    const notes = changelog.slice(changelog.indexOf('### Upgrade notes'));
    const migrations = readdirSync(new URL('packages/server/src/db/migrations/', root))
      .filter((name) => /^\d{4}-.*\.ts$/.test(name))
      .map((name) => name.replace(/\.ts$/, ''));
    assert.ok(migrations.length > 0);
    const missing = migrations.filter((name) => !notes.includes(`| \`${name}\` |`));
    assert.deepEqual(missing, [], 'a row `| `<migration>` | what it changes |` for each');
  });
});
