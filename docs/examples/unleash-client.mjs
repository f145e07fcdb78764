// unleash-client, the server-side SDK for Node.js, against flags-proxy's client API.
import { initialize } from 'unleash-client';

const unleash = initialize({
  url: `${process.env.PROXY_URL ?? 'http://localhost:3000'}/api`,
  customHeaders: {
    Authorization: process.env.CLIENT_TOKEN ?? 'default:development.demo-client-token',
  },
  appName: 'my-service',
});
await new Promise((resolve, reject) => {
  unleash.once('synchronized', resolve);
  unleash.once('error', reject);
});

const context = { userId: 'alice', properties: { plan: 'premium' } };
console.log('beta-banner', unleash.isEnabled('beta-banner', context));
console.log('dark-mode', unleash.getVariant('dark-mode', context).name);
unleash.destroy();
