const rss = () => (process.memoryUsage().rss / 1048576).toFixed(1);
const step = async (name, f) => {
  await f();
  globalThis.gc();
  console.log(name.padEnd(22), rss());
};
await step('start', () => {});
await step('http', () => import('node:http'));
await step('crypto', () => import('node:crypto'));
await step('net/tls/https', async () => {
  await import('node:tls');
  await import('node:https');
});
await step('ajv', () => import('ajv'));
await step('fast-json-stringify', () => import('fast-json-stringify'));
await step('find-my-way', () => import('find-my-way'));
await step('light-my-request', () => import('light-my-request'));
await step('pino', () => import('pino'));
await step('fastify', () => import('fastify'));
await step('undici', () => import('undici'));
await step('prom-client', () => import('prom-client'));
await step('@flags/schemas', () => import('@flags/schemas'));
await step('@flags/engine', () => import('@flags/engine'));
await step('@flags/proxy', () => import('@flags/proxy'));
