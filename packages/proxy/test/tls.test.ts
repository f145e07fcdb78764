// The HTTPS listener and the upstream's TLS options, as Unleash Edge 20 takes them (`TLS_*`,
// `REDIRECT_HTTP_TO_HTTPS`, `UPSTREAM_CERTIFICATE_FILE`, `PKCS8_*`, `PKCS12_*`), over real sockets
// with certificates made by `openssl` for the test.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { ConfigError, createProxy, loadConfig, type ProxyApp } from '@flags/proxy';
import type { ClientFeatures } from '@flags/schemas';
import { type Certificates, makeCertificates } from '../../../test/helpers/certificates.js';
import { freePort } from '../../../test/helpers/processes.js';
import { listen } from '../src/listen.js';
import { FakeUpstream } from './helpers/fake-upstream.js';
import { API_TOKEN, CLIENT_KEY, waitFor } from './helpers/proxy.js';
import { RecordingLogger } from './helpers/recording-logger.js';

const payload: ClientFeatures = {
  version: 2,
  features: [{ name: 'everywhere', enabled: true, strategies: [{ name: 'default' }] }],
};

interface Answer {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

/** One request over a fresh connection (`agent: false`); `ca` trusted for HTTPS. */
function get(
  url: string,
  options: { headers?: Record<string, string>; ca?: Buffer; method?: string } = {},
): Promise<Answer> {
  const secure = url.startsWith('https:');
  return new Promise((resolve, reject) => {
    const request = (secure ? https : http).request(
      url,
      {
        method: options.method ?? 'GET',
        headers: options.headers,
        agent: false,
        ...(secure ? { ca: options.ca } : {}),
      },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          body += chunk;
        });
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body }),
        );
      },
    );
    request.on('error', reject);
    request.end();
  });
}

/** Whether something accepts TCP connections on the port. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** The raw answer to `text` sent on a plain TCP connection. */
function raw(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1' });
    let answer = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      answer += chunk;
    });
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
    socket.write(text);
  });
}

const portOf = (address: string) => Number(new URL(address.split(' ')[0] as string).port);

describe('TLS', () => {
  let certificates: Certificates;
  let upstream: FakeUpstream;
  let ca: Buffer;

  before(async () => {
    certificates = makeCertificates();
    ca = readFileSync(certificates.caCert);
    upstream = await new FakeUpstream(payload).start();
  });

  after(async () => {
    await upstream.stop();
    certificates.remove();
  });

  const proxyWith = (tls: Record<string, unknown>, port: number) =>
    createProxy({
      flagsUrl: upstream.url,
      flagsApiToken: API_TOKEN,
      clientKeys: [CLIENT_KEY],
      refreshInterval: 60_000,
      metricsInterval: 0,
      logger: new RecordingLogger(),
      host: '127.0.0.1',
      port,
      tls: {
        enable: true,
        serverCert: certificates.serverCert,
        serverKey: certificates.serverKey,
        serverPort: 0,
        ...tls,
      },
    });

  describe('with tls.enable (TLS_ENABLE) alone', () => {
    let proxy: ProxyApp;
    let httpPort: number;
    let httpsPort: number;

    before(async () => {
      httpPort = await freePort();
      proxy = await proxyWith({}, httpPort);
      const addresses = await listen(proxy.app, proxy.config);
      assert.equal(addresses.length, 1);
      httpsPort = portOf(addresses[0] as string);
      await waitFor(() => proxy.state.ready);
    });

    after(() => proxy.app.close());

    it('serves the routes over HTTPS with the configured certificate', async () => {
      const answer = await get(`https://localhost:${httpsPort}/api/frontend`, {
        ca,
        headers: { authorization: CLIENT_KEY },
      });
      assert.equal(answer.status, 200);
      assert.deepEqual(
        JSON.parse(answer.body).toggles.map((toggle: { name: string }) => toggle.name),
        ['everywhere'],
      );
      // The event-stream route too: its first bytes on a new connection are a TLS handshake.
      const ready = await get(`https://localhost:${httpsPort}/internal-backstage/ready`, { ca });
      assert.equal(ready.status, 200);
    });

    it('is refused by a client that does not trust the authority', async () => {
      await assert.rejects(get(`https://localhost:${httpsPort}/internal-backstage/health`), {
        code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
      });
    });

    it('answers no plain HTTP on the HTTPS port, and leaves `port` closed, as Edge 20', async () => {
      const answer = await raw(
        httpsPort,
        'GET /internal-backstage/health HTTP/1.1\r\nHost: x\r\n\r\n',
      );
      assert.doesNotMatch(answer, /^HTTP\/1\.1 200/);
      assert.equal(await accepts(httpPort), false);
    });
  });

  describe('with tls.redirectHttpToHttps (REDIRECT_HTTP_TO_HTTPS)', () => {
    let proxy: ProxyApp;
    let httpPort: number;
    let httpsPort: number;

    before(async () => {
      proxy = await proxyWith({ redirectHttpToHttps: true }, 0);
      const addresses = await listen(proxy.app, proxy.config);
      assert.equal(addresses.length, 2);
      httpsPort = portOf(addresses[0] as string);
      httpPort = portOf(addresses[1] as string);
      assert.match(addresses[0] as string, /^https:/);
      await waitFor(() => proxy.state.ready);
    });

    it('answers plain HTTP with 308 to the same path and query on the HTTPS port', async () => {
      const answer = await get(`http://127.0.0.1:${httpPort}/api/frontend?userId=7&x=%20`, {
        headers: { host: `localhost:${httpPort}`, authorization: CLIENT_KEY },
      });
      assert.equal(answer.status, 308);
      assert.equal(
        answer.headers.location,
        `https://localhost:${httpsPort}/api/frontend?userId=7&x=%20`,
      );
      assert.equal(answer.body, '');
      const followed = await get(answer.headers.location as string, {
        ca,
        headers: { authorization: CLIENT_KEY },
      });
      assert.equal(followed.status, 200);
      assert.equal(JSON.parse(followed.body).toggles[0].name, 'everywhere');
    });

    it('redirects every method and keeps an IPv6 host in brackets', async () => {
      const answer = await get(`http://127.0.0.1:${httpPort}/api/client/metrics`, {
        method: 'POST',
        headers: { host: '[::1]' },
      });
      assert.equal(answer.status, 308);
      assert.equal(answer.headers.location, `https://[::1]:${httpsPort}/api/client/metrics`);
    });

    it('answers 400 to a request without a usable Host', async () => {
      const noHost = await raw(httpPort, 'GET /proxy HTTP/1.0\r\n\r\n');
      assert.match(noHost, /^HTTP\/1\.1 400 /);
      assert.match(noHost, /"code":"HOST_REQUIRED","name":"BadRequestError"/);
      const odd = await get(`http://127.0.0.1:${httpPort}/`, { headers: { host: 'a b@evil' } });
      assert.equal(odd.status, 400);
    });

    it('closes both servers when the app closes', async () => {
      assert.equal(await accepts(httpPort), true);
      await proxy.app.close();
      assert.equal(await accepts(httpsPort), false);
      assert.equal(await accepts(httpPort), false);
    });
  });

  describe('configuration', () => {
    const base = { FLAGS_URL: 'http://upstream:4242/api', TOKENS: 'default:development.secret' };
    const problems = (env: Record<string, string>): string => {
      try {
        loadConfig({ ...base, ...env });
      } catch (error) {
        assert.ok(error instanceof ConfigError);
        return error.message;
      }
      assert.fail('loaded');
    };

    it('takes the files and ports by Edge’s names, 3043 by default', () => {
      const config = loadConfig({
        ...base,
        TLS_ENABLE: 'true',
        TLS_SERVER_CERT: certificates.serverCert,
        TLS_SERVER_KEY: certificates.serverKey,
      });
      assert.equal(config.serverTls?.port, 3043);
      assert.equal(config.serverTls?.redirectHttp, false);
      assert.deepEqual(config.serverTls?.cert, readFileSync(certificates.serverCert));
      assert.equal(loadConfig(base).serverTls, undefined);
    });

    it('refuses TLS_ENABLE without a certificate or key, naming them', () => {
      const message = problems({ TLS_ENABLE: 'true', TLS_SERVER_CERT: certificates.serverCert });
      assert.match(message, /tls\.serverKey \(TLS_SERVER_KEY\) must name a PEM file/);
      assert.doesNotMatch(message, /TLS_SERVER_CERT/);
    });

    it('refuses a server file that is missing or not a key, naming option and file', () => {
      const missing = `${certificates.dir}/nowhere.key`;
      assert.match(
        problems({
          TLS_ENABLE: 'true',
          TLS_SERVER_CERT: certificates.serverCert,
          TLS_SERVER_KEY: missing,
        }),
        new RegExp(`TLS_SERVER_KEY\\): cannot read "${missing}" \\(ENOENT\\)`),
      );
      assert.match(
        problems({
          TLS_ENABLE: 'true',
          TLS_SERVER_CERT: certificates.serverCert,
          TLS_SERVER_KEY: certificates.serverCert,
        }),
        /TLS_SERVER_KEY\) ".*server\.crt": not usable for TLS/,
      );
    });

    it('refuses upstream certificate files that are missing or unusable', () => {
      const missing = `${certificates.dir}/nowhere.pem`;
      assert.match(
        problems({ UPSTREAM_CERTIFICATE_FILE: missing }),
        new RegExp(`UPSTREAM_CERTIFICATE_FILE\\): cannot read "${missing}"`),
      );
      assert.match(
        problems({ PKCS12_IDENTITY_FILE: certificates.clientP12, PKCS12_PASSPHRASE: 'wrong' }),
        /PKCS12_IDENTITY_FILE\) ".*client\.p12": not usable for TLS/,
      );
      assert.match(
        problems({ PKCS8_CLIENT_CERTIFICATE_FILE: certificates.clientCert }),
        /clientKeyFile \(PKCS8_CLIENT_KEY_FILE\) must be set too/,
      );
      assert.match(
        problems({
          PKCS8_CLIENT_CERTIFICATE_FILE: certificates.clientCert,
          PKCS8_CLIENT_KEY_FILE: certificates.serverKey,
        }),
        /PKCS8_CLIENT_CERTIFICATE_FILE\) ".*client\.crt", .*PKCS8_CLIENT_KEY_FILE\) ".*server\.key": not usable/,
      );
    });

    it('reads the client identity, PKCS#12 winning over PKCS#8 as in Edge', () => {
      const pkcs8 = loadConfig({
        ...base,
        UPSTREAM_CERTIFICATE_FILE: certificates.caCert,
        PKCS8_CLIENT_CERTIFICATE_FILE: certificates.clientCert,
        PKCS8_CLIENT_KEY_FILE: certificates.clientKey,
      }).upstreamTls;
      assert.deepEqual(pkcs8.cert, readFileSync(certificates.clientCert));
      assert.deepEqual(pkcs8.key, readFileSync(certificates.clientKey));
      // The private authority is trusted besides the usual ones, not instead of them.
      assert.ok((pkcs8.ca?.length ?? 0) > 1);
      assert.deepEqual(pkcs8.ca?.at(-1), readFileSync(certificates.caCert));
      const both = loadConfig({
        ...base,
        PKCS8_CLIENT_CERTIFICATE_FILE: certificates.clientCert,
        PKCS8_CLIENT_KEY_FILE: certificates.clientKey,
        PKCS12_IDENTITY_FILE: certificates.clientP12,
        PKCS12_PASSPHRASE: certificates.passphrase,
      }).upstreamTls;
      assert.deepEqual(both.pfx, readFileSync(certificates.clientP12));
      assert.equal(both.passphrase, certificates.passphrase);
      assert.equal(both.cert, undefined);
    });
  });
});
