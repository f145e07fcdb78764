// measure RSS stages
const rss = () => (process.memoryUsage().rss / 1048576).toFixed(1);
const heap = () => (process.memoryUsage().heapUsed / 1048576).toFixed(1);
console.log('start', rss(), heap());
await import('fastify');
console.log('fastify', rss(), heap());
await import('undici');
console.log('undici', rss(), heap());
await import('prom-client');
console.log('prom-client', rss(), heap());
await import('pino');
console.log('pino', rss(), heap());
const { createProxy } = await import('@flags/proxy');
console.log('proxy module', rss(), heap());
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
console.log('ready', rss(), heap());
await proxy.app.listen({ port: 0, host: '127.0.0.1' });
console.log('listening', rss(), heap());
globalThis.gc?.();
console.log('after gc', rss(), heap());
process.exit(0);
