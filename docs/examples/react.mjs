// React with @unleash/proxy-client-react against flags-proxy. Plain ESM without JSX, rendered to
// HTML with react-dom/server so that it runs in Node.js as it is.
import {
  FlagProvider,
  InMemoryStorageProvider,
  UnleashClient,
  useFlag,
  useVariant,
} from '@unleash/proxy-client-react';
import { createElement as h } from 'react';
import { renderToString } from 'react-dom/server';

function Home() {
  const betaBanner = useFlag('beta-banner');
  const darkMode = useVariant('dark-mode');
  return h(
    'ul',
    null,
    h('li', null, `beta-banner ${betaBanner}`),
    h('li', null, `dark-mode ${darkMode.name}`),
  );
}

const unleash = new UnleashClient({
  url: `${process.env.PROXY_URL ?? 'http://localhost:3000'}/proxy`,
  clientKey: process.env.CLIENT_KEY ?? 'demo-client-key',
  appName: 'my-react-app',
  context: { userId: 'alice', properties: { plan: 'premium' } },
  storageProvider: new InMemoryStorageProvider(), // in a browser, leave this out: it uses localStorage
  metricsIntervalInitial: 0, // no first-metrics timer, so that stop() below ends every timer
});
// On the server, render once the flags are in. In a browser, hand FlagProvider the configuration
// instead (`config={{ url, clientKey, appName }}`) and render with react-dom/client's createRoot:
// it starts the client and re-renders Home as the flags arrive and change.
await unleash.start();
console.log(
  renderToString(h(FlagProvider, { unleashClient: unleash, startClient: false }, h(Home))),
);
await unleash.sendMetrics(); // this render's flag counts, to flags-proxy's metrics
unleash.stop();
