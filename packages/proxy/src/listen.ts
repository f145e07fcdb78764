import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { ProxyConfig } from './config/load.js';
import { ERROR_CONTENT_TYPE, errorBody, ProxyError } from './errors.js';

/**
 * Makes a built app listen as Unleash Edge 20 does: plain HTTP on `port`; or, with `tls.enable`
 * (the app then being an HTTPS server, see `buildApp`), HTTPS on `tls.serverPort` only, plus, with
 * `tls.redirectHttpToHttps`, a server on `port` that redirects every request there. Closing the
 * app closes that server too. Returns the addresses listened on, the app's first, as bound
 * (`http://0.0.0.0:3000`: Fastify's own answer names `127.0.0.1` for a wildcard address, which
 * would tell the operator the port is reachable only locally).
 */
export async function listen(app: FastifyInstance, config: ProxyConfig): Promise<string[]> {
  const tls = config.serverTls;
  if (tls === undefined) {
    await app.listen({ port: config.port, host: config.host });
    return [urlOf(app.server.address() as AddressInfo)];
  }
  await app.listen({ port: tls.port, host: config.host });
  const address = urlOf(app.server.address() as AddressInfo, 'https');
  if (!tls.redirectHttp) return [address];
  // Redirects to the port actually bound (the configured one, unless 0 asked for any).
  const httpsPort = (app.server.address() as AddressInfo).port;
  const redirect = http.createServer(redirectToHttps(httpsPort));
  try {
    await new Promise<void>((resolve, reject) => {
      redirect.once('error', reject);
      redirect.listen({ port: config.port, host: config.host }, resolve);
    });
  } catch (error) {
    await app.close();
    throw error;
  }
  // The app's server closes before `app.close()` resolves; the redirect goes with it.
  app.server.once('close', () => {
    redirect.close();
    redirect.closeAllConnections();
  });
  return [address, `${urlOf(redirect.address() as AddressInfo)} (redirects to HTTPS)`];
}

function urlOf(address: AddressInfo, scheme = 'http'): string {
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `${scheme}://${host}:${address.port}`;
}

/** A host name, IPv4 address or bracketed IPv6 address, with an optional port. */
const HOST_HEADER = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(?::\d{1,5})?$/;

/**
 * Answers every request with `308 Permanent Redirect` to the same path and query on
 * `https://<host of the Host header>:<httpsPort>`, as Edge does (the method and body are kept by
 * the client, unlike with 301). A request without a usable `Host` gets 400.
 */
export function redirectToHttps(httpsPort: number): http.RequestListener {
  return (request, response) => {
    const host = HOST_HEADER.exec(request.headers.host ?? '')?.[1];
    if (host === undefined) {
      const error = new ProxyError('HOST_REQUIRED');
      response
        .writeHead(error.status, { 'content-type': ERROR_CONTENT_TYPE, connection: 'close' })
        .end(JSON.stringify(errorBody(error)));
      return;
    }
    response
      .writeHead(308, {
        location: `https://${host}:${httpsPort}${pathAndQuery(request.url)}`,
        'content-length': '0',
      })
      .end();
  };
}

/** The path and query of a request target (origin form, or absolute form `http://host/path`). */
function pathAndQuery(target: string | undefined): string {
  if (target === undefined || target === '') return '/';
  if (target.startsWith('/')) return target;
  if (!URL.canParse(target)) return '/';
  const url = new URL(target);
  return `${url.pathname}${url.search}`;
}
