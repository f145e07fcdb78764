// scratch (not committed): flags-server toggle latency + CPU at N flags
import { performance } from 'node:perf_hooks';
import { readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { adminRequest } from '../scripts/demo/seed.js';
import { freePort, spawnEntry, waitUntilHealthy } from '../test/helpers/processes.js';
import { seededRandom } from '../test/helpers/seeded-random.js';
import { POSTGRES_URL, withDatabase } from './bench-database.js';
import { importPayload } from './server-payload.js';

const N = Number(process.env.FLAGS ?? 2000);
const T = Number(process.env.TOGGLES ?? 300);
const MAIN = fileURLToPath(new URL('../packages/server/src/main.ts', import.meta.url));
const TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout) || 100;
const cpuMs = (pid: number) => { try { const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' '); return ((+f[11]! + +f[12]!) / TICKS) * 1000; } catch { return 0; } };
const pct = (v: number[], p: number) => { const s = [...v].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!; };
await withDatabase(async (db) => {
  const port = await freePort();
  const server = spawnEntry(MAIN, { DATABASE_URL: db, SERVER_PORT: String(port), SERVER_HOST: '127.0.0.1', FLAGS_ADMIN_TOKENS: 'adm', LOG_LEVEL: 'warn', ...JSON.parse(process.env.EXTRA ?? '{}') });
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitUntilHealthy(`${url}/health`, server.child, { output: server.output });
    const payload = importPayload(N);
    await adminRequest(url, 'adm', 'POST', '/api/admin/features-batch/import', payload);
    const states = new Map(payload.data.featureEnvironments.map(({ featureName, enabled }) => [featureName, enabled]));
    const names = [...states.keys()];
    const rand = seededRandom(7);
    const pgc = new pg.Client({ connectionString: POSTGRES_URL }); await pgc.connect();
    const dbname = new URL(db).pathname.slice(1);
    const pids = async () => [server.child.pid!, ...(await pgc.query('SELECT pid FROM pg_stat_activity WHERE datname=$1', [dbname])).rows.map((r) => r.pid)];
    const lat: number[] = [];
    let before = new Map<number, number>();
    for (let i = 0; i < 30 + T; i++) {
      if (i === 30) { before = new Map((await pids()).map((p) => [p, cpuMs(p)])); if (process.env.PROF) process.kill(server.child.pid!, 'SIGUSR2'); }
      const flag = names[Math.floor(rand() * names.length)]!; const on = !states.get(flag); states.set(flag, on);
      const s = performance.now();
      const r = await fetch(`${url}/api/admin/projects/default/features/${flag}/environments/development/${on ? 'on' : 'off'}`, { method: 'POST', headers: { authorization: 'adm' } });
      await r.text();
      if (!r.ok) throw new Error(String(r.status));
      if (i >= 30) lat.push(performance.now() - s);
    }
    if (process.env.PROF) process.kill(server.child.pid!, 'SIGUSR2');
    await new Promise((r) => setTimeout(r, 1500));
    let cpu = 0; for (const p of await pids()) cpu += cpuMs(p) - (before.get(p) ?? 0);
    const nodeCpu = cpuMs(server.child.pid!) - (before.get(server.child.pid!) ?? 0);
    console.log(`toggle median ${pct(lat, 50).toFixed(2)} p90 ${pct(lat, 90).toFixed(2)} p99 ${pct(lat, 99).toFixed(2)} ms; cpu/toggle ${(cpu / T).toFixed(2)} (node ${(nodeCpu / T).toFixed(2)})`);
    await pgc.end();
  } finally { server.child.kill('SIGTERM'); await server.exited; }
});
