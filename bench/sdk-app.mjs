// An app with an unleash-client, as its own process (the day-one part of bench/admin.bench.ts):
// its SDK's work on each change then takes a core of the machine, as an app's would, but not the
// event loop of the bench that times the toggles. Connects to SDK_URL with SDK_TOKEN (streaming
// when SDK_STREAMING=1, else polling), prints `synchronized` once it has the flags, and stops when
// its standard input closes.
import { Unleash } from 'unleash-client';

const client = new Unleash({
  url: process.env.SDK_URL,
  appName: 'bench-admin-day-one',
  customHeaders: { authorization: process.env.SDK_TOKEN },
  disableMetrics: true,
  ...(process.env.SDK_STREAMING === '1' ? { experimentalMode: { type: 'streaming' } } : {}),
});
client.on('error', (error) => console.error(String(error)));
client.on('warn', () => {});
client.once('synchronized', () => console.log('synchronized'));
process.stdin.resume();
process.stdin.on('end', () => {
  client.destroy();
  process.exit(0);
});
