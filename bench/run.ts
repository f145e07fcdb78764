// `npm run bench [name]`: runs each service benchmark (bench/<name>.bench.ts) in its own process,
// one after the other so they do not compete for the machine's cores.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const suites = ['engine', 'proxy', 'server', 'propagation', 'admin'];
const only = process.argv[2];
let failed = false;
for (const suite of suites) {
  if (only && suite !== only) continue;
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
