// `npm run bench [name]`: runs each service benchmark (bench/<name>.bench.ts) in its own process,
// one after the other so they do not compete for the machine's cores. `server` runs both of
// flags-server's: its client API and imports (`server`), then its admin API (`admin`). `migrate`
// times `flags-server migrate from-unleash` on an unleash-server of 5,000 flags.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const suites = ['engine', 'proxy', 'server', 'propagation', 'admin', 'migrate'];
const groups: Readonly<Record<string, readonly string[]>> = { server: ['server', 'admin'] };
const only = process.argv[2];
const chosen = only ? (groups[only] ?? [only]) : suites;
let failed = false;
for (const suite of suites) {
  if (!chosen.includes(suite)) continue;
  const file = fileURLToPath(new URL(`./${suite}.bench.ts`, import.meta.url));
  if (!existsSync(file)) continue;
  console.log(`\n=== ${suite} ===`);
  const result = spawnSync(
    process.execPath,
    ['--conditions=source', '--expose-gc', '--import', 'tsx', file],
    {
      stdio: 'inherit',
    },
  );
  if (result.status !== 0) failed = true;
}
process.exit(failed ? 1 : 0);
