import { readFileSync } from 'node:fs';

const f = (k) =>
  Number(readFileSync('/proc/self/status', 'utf8').match(new RegExp(k + ':\\s+(\\d+)'))[1]) >> 10;
const t0 = Date.now();
const log = (what) =>
  console.log(
    String(Date.now() - t0).padStart(5),
    what.padEnd(12),
    'rss',
    f('VmRSS'),
    'hwm',
    f('VmHWM'),
    'anon',
    f('RssAnon'),
  );
log('start');
for (const m of (process.env.MODS ?? '').split(',').filter(Boolean)) await import(m);
log('imported');
let last = f('VmHWM');
const timer = setInterval(() => {
  const h = f('VmHWM');
  if (h !== last) {
    last = h;
    log('moved');
  }
}, 5);
setTimeout(() => {
  clearInterval(timer);
  log('end');
  process.exit(0);
}, 2000);
