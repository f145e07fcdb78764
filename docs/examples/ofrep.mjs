// OpenFeature's OFREP web provider against flags-proxy's /ofrep routes.
import { OFREPWebProvider } from '@openfeature/ofrep-web-provider';
import { OpenFeature } from '@openfeature/web-sdk';

const proxyUrl = process.env.PROXY_URL ?? 'http://localhost:3000';
const clientKey = process.env.CLIENT_KEY ?? 'demo-client-key';

await OpenFeature.setContext({ targetingKey: 'alice', plan: 'premium' });
await OpenFeature.setProviderAndWait(
  new OFREPWebProvider({ baseUrl: proxyUrl, headers: [['Authorization', clientKey]] }),
);
const client = OpenFeature.getClient();

console.log('beta-banner', client.getBooleanValue('beta-banner', false));
console.log('dark-mode', client.getStringValue('dark-mode', 'light'));
await OpenFeature.close();
