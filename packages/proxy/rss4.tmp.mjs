const { createProxy } = await import('@flags/proxy');
const proxy = await createProxy({
  flagsUrl: process.argv[2],
  flagsApiToken: 't',
  clientKeys: ['k'],
  logLevel: 'error',
  useJsonLogger: true,
  flagsAppName: 'b',
});
await proxy.poller.ready;
await proxy.app.listen({ port: 3999, host: '127.0.0.1' });
console.log('ready');
