import { createRequire } from 'node:module';
const { createProxy } = await import('@flags/proxy');
const proxy = await createProxy({ flagsUrl: process.argv[2], flagsApiToken: 't', clientKeys: ['k'], logLevel: 'error', useJsonLogger: true, flagsAppName: 'b' });
await proxy.poller.ready;
await proxy.app.ready();
const require = createRequire(import.meta.url);
const byPkg = new Map();
for (const file of Object.keys(require.cache)) {
  const m = file.match(/node_modules\/((@[^/]+\/)?[^/]+)/);
  const k = m ? m[1] : file.replace(/.*packages\//, 'ours:').split('/')[0];
  byPkg.set(k, (byPkg.get(k) ?? 0) + 1);
}
console.log([...byPkg].sort((a, b) => b[1] - a[1]).map(([k, v]) => `${v} ${k}`).join('\n'));
process.exit(0);
