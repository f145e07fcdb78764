// unleash-proxy-client (the browser SDK; React's @unleash/proxy-client-react wraps it) against flags-proxy.
import { InMemoryStorageProvider, UnleashClient } from 'unleash-proxy-client';

const unleash = new UnleashClient({
  url: `${process.env.PROXY_URL ?? 'http://localhost:3000'}/proxy`,
  clientKey: process.env.CLIENT_KEY ?? 'demo-client-key',
  appName: 'my-web-app',
  refreshInterval: 2, // seconds
  context: { userId: 'alice', properties: { plan: 'premium' } },
  storageProvider: new InMemoryStorageProvider(), // in a browser, leave this out: it uses localStorage
});
await unleash.start();
console.log('beta-banner', unleash.isEnabled('beta-banner'));
console.log('dark-mode', unleash.getVariant('dark-mode').name);

// Keeps running: each change of a flag prints its new state.
unleash.on('update', () => console.log('maintenance-mode', unleash.isEnabled('maintenance-mode')));
