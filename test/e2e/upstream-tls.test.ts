import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type Certificates, makeCertificates } from '../helpers/certificates.js';
import {
  type FrontendToggle,
  frontendQuery,
  generateContexts,
  generateFlagSet,
} from '../helpers/differential.js';
import {
  freePort,
  type SpawnedEntry,
  spawnCommand,
  waitUntilHealthy,
} from '../helpers/processes.js';
import {
  startUnleashServer,
  type UnleashServer,
  unleashServerSkip,
} from '../helpers/unleash-server.js';
import { waitFor } from '../helpers/wait.js';

/**
 * flags-proxy syncing from an upstream reached over mutual TLS, as Unleash Edge does it: a private
 * certificate authority (`UPSTREAM_CERTIFICATE_FILE`) and a client identity (`PKCS8_*` or
 * `PKCS12_*`). The upstream is the real unleash-server behind a TLS relay that demands a client
 * certificate signed by the authority; the certificates are made by `openssl` for the test.
 */

const SEED = 2043;
const flagSet = generateFlagSet(SEED, 30);
const contexts = generateContexts(SEED, 40);
const PROXY_MAIN = fileURLToPath(new URL('../../packages/proxy/src/main.ts', import.meta.url));

/** An HTTPS server in front of `target` that serves only clients with a certificate `ca` signed. */
async function startRelay(
  certificates: Certificates,
  target: URL,
): Promise<{ url: string; served: () => number; close(): Promise<void> }> {
  let served = 0;
  const relay = https.createServer(
    {
      cert: readFileSync(certificates.serverCert),
      key: readFileSync(certificates.serverKey),
      ca: readFileSync(certificates.caCert),
      requestCert: true,
      rejectUnauthorized: true,
    },
    (request, response) => {
      served++;
      const forwarded = http.request(
        {
          host: target.hostname,
          port: target.port,
          method: request.method,
          path: request.url,
          headers: { ...request.headers, host: target.host },
        },
        (answer) => {
          response.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(response);
        },
      );
      forwarded.on('error', () => response.destroy());
      request.pipe(forwarded);
    },
  );
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  const { port } = relay.address() as AddressInfo;
  return {
    url: `https://localhost:${port}`,
    served: () => served,
    close: () =>
      new Promise((resolve) => {
        relay.closeAllConnections();
        relay.close(() => resolve());
      }),
  };
}

/** Toggles in name order, with the fields a frontend SDK reads. */
function comparable(toggles: readonly FrontendToggle[]) {
  return [...toggles]
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map(({ name, enabled, variant, impressionData }) => ({
      name,
      enabled,
      variant: {
        name: variant.name,
        enabled: variant.enabled,
        ...(variant.payload === undefined ? {} : { payload: variant.payload }),
      },
      impressionData,
    }));
}

async function frontend(base: string, token: string, query: string): Promise<FrontendToggle[]> {
  const response = await fetch(`${base}/api/frontend?${query}`, {
    headers: { authorization: token },
  });
  assert.equal(response.status, 200, `${base}: ${await response.clone().text()}`);
  return ((await response.json()) as { toggles: FrontendToggle[] }).toggles;
}

describe(
  'flags-proxy syncing over mutual TLS (Edge’s upstream TLS options)',
  {
    skip: unleashServerSkip,
  },
  () => {
    let certificates: Certificates;
    let unleash: UnleashServer;
    let relay: Awaited<ReturnType<typeof startRelay>>;
    let clientToken: string;
    let frontendToken: string;
    const running: SpawnedEntry[] = [];

    before(async () => {
      certificates = makeCertificates();
      unleash = await startUnleashServer();
      for (const segment of flagSet.segments) await unleash.createSegment(segment);
      await unleash.importFlags(flagSet.documents.development, 'development');
      clientToken = await unleash.createToken({ type: 'client', environment: 'development' });
      frontendToken = await unleash.createToken({ type: 'frontend', environment: 'development' });
      relay = await startRelay(certificates, new URL(unleash.url));
    });

    after(async () => {
      for (const proxy of running) {
        proxy.child.kill('SIGKILL');
        await proxy.exited;
      }
      await relay?.close();
      await unleash?.stop();
      certificates?.remove();
    });

    /** `flags-proxy edge` with Edge's variables, syncing from the relay; its base URL. */
    async function startProxy(
      tls: Record<string, string>,
    ): Promise<{ url: string; proxy: SpawnedEntry }> {
      const port = await freePort();
      const proxy = spawnCommand(
        process.execPath,
        ['--conditions=source', '--import', 'tsx', PROXY_MAIN, 'edge'],
        {
          UPSTREAM_URL: relay.url,
          TOKENS: clientToken,
          PORT: String(port),
          INTERFACE: '127.0.0.1',
          FEATURES_REFRESH_INTERVAL_SECONDS: '1',
          METRICS_INTERVAL_SECONDS: '1',
          LOG_LEVEL: 'info',
          ...tls,
        },
      );
      running.push(proxy);
      return { url: `http://127.0.0.1:${port}`, proxy };
    }

    async function servesAsUnleash(tls: Record<string, string>): Promise<void> {
      const { url, proxy } = await startProxy(tls);
      await waitUntilHealthy(`${url}/api/frontend`, proxy.child, {
        headers: { authorization: frontendToken },
        output: proxy.output,
      });
      for (const context of contexts) {
        const query = frontendQuery(context);
        assert.deepEqual(
          comparable(await frontend(url, frontendToken, query)),
          comparable(await frontend(unleash.url, frontendToken, query)),
          query,
        );
      }
      proxy.child.kill('SIGTERM');
      await proxy.exited;
    }

    it('serves unleash-server’s answers with a PKCS#8 client identity (PEM certificate and key)', async () => {
      const before = relay.served();
      await servesAsUnleash({
        UPSTREAM_CERTIFICATE_FILE: certificates.caCert,
        PKCS8_CLIENT_CERTIFICATE_FILE: certificates.clientCert,
        PKCS8_CLIENT_KEY_FILE: certificates.clientKey,
      });
      assert.ok(relay.served() > before, 'the proxy went through the relay');
    });

    it('serves unleash-server’s answers with a PKCS#12 client identity and its passphrase', async () => {
      await servesAsUnleash({
        UPSTREAM_CERTIFICATE_FILE: certificates.caCert,
        PKCS12_IDENTITY_FILE: certificates.clientP12,
        PKCS12_PASSPHRASE: certificates.passphrase,
      });
    });

    /** Starts a proxy that cannot sync, waits until its log says `reason`, and checks it is not ready. */
    async function notReady(tls: Record<string, string>, reason: RegExp): Promise<void> {
      const { url, proxy } = await startProxy(tls);
      // Its first sync (a stream in Edge mode, polling once streaming gives up) fails, and the log
      // says why.
      const said = () =>
        /upstream (stream dropped|features request failed)/.test(proxy.output()) &&
        reason.test(proxy.output());
      await waitFor(said, 30_000, `the log to say ${reason}`).catch((error: Error) =>
        assert.fail(`${error.message}; the log:\n${proxy.output()}`),
      );
      const ready = await fetch(`${url}/internal-backstage/ready`);
      assert.notEqual(ready.status, 200, await ready.text());
      const answer = await fetch(`${url}/api/frontend`, {
        headers: { authorization: frontendToken },
      });
      assert.notEqual(answer.status, 200);
      proxy.child.kill('SIGTERM');
      await proxy.exited;
    }

    it('does not sync without a client certificate, and says why', async () => {
      await notReady({ UPSTREAM_CERTIFICATE_FILE: certificates.caCert }, /certificate required/i);
    });

    it('does not sync without the private authority, and says why', async () => {
      await notReady(
        {
          PKCS8_CLIENT_CERTIFICATE_FILE: certificates.clientCert,
          PKCS8_CLIENT_KEY_FILE: certificates.clientKey,
        },
        // The relay sends its chain up to the authority, which nothing here trusts.
        /SELF_SIGNED_CERT_IN_CHAIN: self-signed certificate in certificate chain/,
      );
    });

    it('stops at start on a certificate file that cannot be read, naming option and file', async () => {
      const missing = `${certificates.dir}/missing-ca.pem`;
      const { proxy } = await startProxy({ UPSTREAM_CERTIFICATE_FILE: missing });
      assert.equal(await proxy.exited, 1);
      assert.match(
        proxy.output(),
        new RegExp(`UPSTREAM_CERTIFICATE_FILE\\): cannot read "${missing}" \\(ENOENT\\)`),
      );
    });
  },
);
