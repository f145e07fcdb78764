import v8 from 'node:v8';
if (process.env.LIFTOFF) v8.setFlagsFromString('--liftoff-only');

import { readFileSync } from 'node:fs';

const hwm = () =>
  Number(readFileSync('/proc/self/status', 'utf8').match(/VmHWM:\s+(\d+)/)[1]) >> 10;
const rss = () =>
  Number(readFileSync('/proc/self/status', 'utf8').match(/VmRSS:\s+(\d+)/)[1]) >> 10;
const t0 = Date.now();
const f = (k) =>
  Number(readFileSync('/proc/self/status', 'utf8').match(new RegExp(k + ':\\s+(\\d+)'))[1]) >> 10;
const log = (what) =>
  console.log(
    String(Date.now() - t0).padStart(5),
    what.padEnd(20),
    'rss',
    rss(),
    'hwm',
    hwm(),
    'anon',
    f('RssAnon'),
    'file',
    f('RssFile'),
  );
log('start');
const { createProxy } = await import('@flags/proxy');
log('imported');
const proxy = await createProxy({
  flagsUrl: process.argv[2],
  flagsApiToken: 't',
  clientKeys: ['k'],
  logLevel: 'error',
  useJsonLogger: true,
  flagsAppName: 'b',
  ...JSON.parse(process.env.EXTRA ?? '{}'),
});
log('created');
await proxy.poller.ready;
log('ready');
if (!process.env.NOLISTEN) await proxy.app.listen({ port: 3999, host: '127.0.0.1' });
else await proxy.app.ready();
log('listening');
let last = hwm();
const timer = setInterval(() => {
  const h = hwm();
  if (h !== last) {
    last = h;
    log('hwm moved');
  }
}, 5);
setTimeout(async () => {
  clearInterval(timer);
  log('end');
  for (const t of (await import('node:fs')).readdirSync('/proc/self/task'))
    console.log(t, readFileSync('/proc/self/task/' + t + '/comm', 'utf8').trim());
  process.exit(0);
}, 3000);
