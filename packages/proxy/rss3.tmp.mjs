import { spawn } from 'node:child_process';
import v8 from 'node:v8';

const rss = () => (process.memoryUsage().rss / 1048576).toFixed(1);
const { createProxy } = await import('@flags/proxy');
const upstream = process.argv[2];
const proxy = await createProxy({
  flagsUrl: upstream,
  flagsApiToken: 't',
  clientKeys: ['k'],
  logLevel: 'error',
  useJsonLogger: true,
  flagsAppName: 'b',
});
await proxy.poller.ready;
await proxy.app.listen({ port: 3999, host: '127.0.0.1' });
console.log(
  'listening',
  rss(),
  (await import('node:fs')).readFileSync('/proc/self/status', 'utf8').match(/VmHWM:.*/)[0],
);
let max = 0,
  at;
const timer = setInterval(() => {
  const m = process.memoryUsage();
  if (m.rss > max) {
    max = m.rss;
    at = {
      m,
      spaces: v8
        .getHeapSpaceStatistics()
        .map(
          (s) =>
            `${s.space_name}:${(s.space_size / 1048576).toFixed(1)}/${(s.space_used_size / 1048576).toFixed(1)}`,
        )
        .join(' '),
    };
  }
}, 50);
const ac = spawn(
  'npx',
  [
    'autocannon',
    '-c',
    '32',
    '-d',
    '5',
    '-H',
    'authorization=k',
    'http://127.0.0.1:3999/proxy?userId=u1&sessionId=s1&properties[a]=b',
  ],
  { stdio: 'ignore' },
);
await new Promise((r) => ac.on('exit', r));
clearInterval(timer);
console.log(
  'peak',
  (max / 1048576).toFixed(1),
  JSON.stringify({
    heapTotal: at.m.heapTotal / 1048576,
    heapUsed: at.m.heapUsed / 1048576,
    external: at.m.external / 1048576,
    ab: at.m.arrayBuffers / 1048576,
  }),
);
console.log(at.spaces);
const fs = await import('node:fs');
console.log(
  fs
    .readFileSync('/proc/self/status', 'utf8')
    .split('\n')
    .filter((l) => /Vm|Rss/.test(l))
    .join('\n'),
);
