import v8 from 'node:v8';
import { readFileSync } from 'node:fs';
v8.setFlagsFromString('--liftoff-only'); if (process.env.V8F) v8.setFlagsFromString(process.env.V8F);
const { createProxy } = await import('@flags/proxy');
const proxy = await createProxy({ flagsUrl: process.argv[2], flagsApiToken: 't', clientKeys: ['k'], logLevel: 'error', useJsonLogger: true, flagsAppName: 'b', ...JSON.parse(process.env.EXTRA ?? '{}') });
await proxy.poller.ready;
await proxy.app.listen({ port: 3999, host: '127.0.0.1' });
const f = (k) => Number(readFileSync('/proc/self/status','utf8').match(new RegExp(k + ':\\s+(\\d+)'))[1]) >> 10;
let max = 0, at;
setInterval(() => {
  const r = f('VmRSS');
  if (r > max) { const m = process.memoryUsage(); max = r; at = `rss ${r} hwm ${f('VmHWM')} anon ${f('RssAnon')} heapTotal ${(m.heapTotal/1048576).toFixed(1)} used ${(m.heapUsed/1048576).toFixed(1)} ext ${(m.external/1048576).toFixed(1)} ab ${(m.arrayBuffers/1048576).toFixed(1)} | ` + v8.getHeapSpaceStatistics().filter(s => s.space_size > 0).map(s => `${s.space_name.replace('_space','')}:${(s.space_size/1048576).toFixed(1)}/${(s.space_used_size/1048576).toFixed(1)}`).join(' '); }
}, 20).unref();
let cpu0 = process.cpuUsage(); process.on('SIGUSR2', () => { const c = process.cpuUsage(cpu0); cpu0 = process.cpuUsage(); console.log('max', at, 'cpu ms', Math.round((c.user + c.system) / 1000)); });
console.log('ready', f('VmRSS'), f('VmHWM'));
if (process.env.CAP) {
  const { PerformanceObserver } = await import('node:perf_hooks');
  const obs = new PerformanceObserver(() => {
    const ns = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
    if (ns.space_size >= Number(process.env.CAP) * 1048576) { v8.setFlagsFromString('--semi-space-growth-factor=1'); obs.disconnect(); console.log('capped at', ns.space_size / 1048576); }
  });
  obs.observe({ entryTypes: ['gc'] });
}
