import * as http from 'node:http';
import * as https from 'node:https';
import type { UpstreamTls } from '../config/tls-files.js';
import { proxyBypass } from './no-proxy.js';

/**
 * One upstream request; `timeoutMs` bounds the whole exchange (connect, headers and body), or with
 * `stream` only until the headers arrive (an event stream's body has no end).
 */
export interface UpstreamRequestInit {
  readonly method: 'GET' | 'POST';
  readonly headers: Record<string, string>;
  readonly body?: string;
  readonly timeoutMs: number;
  readonly stream?: boolean;
}

/** An upstream answer whose body must be consumed once, with `text()` or `dump()`. */
export interface UpstreamResponse {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  /** The body as UTF-8 text. */
  text(): Promise<string>;
  /** Reads and discards the body. */
  dump(): Promise<void>;
  /** The body as UTF-8 text chunks as they arrive; ends when the upstream closes it. */
  chunks(): AsyncIterable<string>;
  /** Closes the connection (the body iteration then fails). */
  cancel(): void;
}

/** Makes the proxy's upstream requests (sync, bootstrap, registration, usage metrics). */
export interface UpstreamClient {
  request(url: URL | string, init: UpstreamRequestInit): Promise<UpstreamResponse>;
  /** Destroys every connection; later requests fail. */
  close(): Promise<void>;
}

export interface UpstreamClientOptions {
  /** Verify the upstream's TLS certificate (also through a proxy's tunnel). */
  readonly rejectUnauthorized: boolean;
  /** Forward proxy for `http:` URLs (absolute-URI requests). */
  readonly httpProxy?: URL | undefined;
  /** Forward proxy for `https:` URLs (`CONNECT` tunnels). */
  readonly httpsProxy?: URL | undefined;
  /** Hosts reached directly although a forward proxy is set (`NO_PROXY`; see `proxyBypass`). */
  readonly noProxy?: readonly string[];
  /** Trusted authorities and client identity for the upstream's TLS (also through a tunnel). */
  readonly upstreamTls?: UpstreamTls;
  /** Idle time before TCP keep-alive probes on an upstream connection, ms. */
  readonly upstreamKeepAliveMs?: number;
}

type ErrorWithCode = Error & { code: string };

function codedError(message: string, code: string): ErrorWithCode {
  return Object.assign(new Error(message), { code });
}

/**
 * An upstream client on `node:http`/`node:https` (already loaded by Fastify), with one keep-alive
 * agent per protocol and route (through the forward proxy, or direct for `NO_PROXY` hosts). undici cost ~10 MB of heap plus a WebAssembly parser for a few requests a
 * minute. The proxy agents are imported only when a proxy is configured.
 */
export function createUpstreamClient(options: UpstreamClientOptions): UpstreamClient {
  const agents = new Map<string, Promise<http.Agent>>();
  const bypass = proxyBypass(options.noProxy ?? []);
  const secure = secureOptions(options);
  // Ends the forward-proxy agents' connections that no agent holds yet (a CONNECT in progress).
  const closing = new AbortController();
  let closed = false;

  const agentFor = (protocol: 'http:' | 'https:', direct: boolean): Promise<http.Agent> => {
    const key = direct ? `${protocol} direct` : protocol;
    let agent = agents.get(key);
    if (agent === undefined) {
      agent = createAgent(protocol, options, secure, direct, closing.signal);
      agents.set(key, agent);
    }
    return agent;
  };

  return {
    async request(url, init) {
      const target = typeof url === 'string' ? new URL(url) : url;
      const protocol = target.protocol;
      if (protocol !== 'http:' && protocol !== 'https:')
        throw codedError(`unsupported upstream protocol ${protocol}`, 'ERR_INVALID_PROTOCOL');
      if (closed) throw codedError('the upstream client is closed', 'ERR_UPSTREAM_CLOSED');
      const agent = await agentFor(protocol, bypass(target));
      if (closed) throw codedError('the upstream client is closed', 'ERR_UPSTREAM_CLOSED');
      return send(target, init, agent, secure);
    },
    async close() {
      closed = true;
      const pending = [...agents.values()];
      agents.clear();
      for (const agent of await Promise.allSettled(pending)) {
        if (agent.status === 'fulfilled') agent.value.destroy();
      }
      closing.abort();
    },
  };
}

/** What the upstream's TLS connections take: verification, trusted authorities, identity. */
function secureOptions(options: UpstreamClientOptions): https.AgentOptions {
  const { ca, ...identity } = options.upstreamTls ?? {};
  return {
    rejectUnauthorized: options.rejectUnauthorized,
    ...identity,
    ...(ca === undefined ? {} : { ca: [...ca] }),
  };
}

async function createAgent(
  protocol: 'http:' | 'https:',
  options: UpstreamClientOptions,
  secure: https.AgentOptions,
  direct: boolean,
  signal: AbortSignal,
): Promise<http.Agent> {
  const { rejectUnauthorized } = options;
  const keepAliveMsecs = options.upstreamKeepAliveMs;
  const keepAlive = {
    keepAlive: true,
    ...(keepAliveMsecs === undefined ? {} : { keepAliveMsecs }),
  };
  if (protocol === 'https:') {
    if (direct || options.httpsProxy === undefined)
      return new https.Agent({ ...keepAlive, ...secure });
    const { HttpsProxyAgent } = await import('https-proxy-agent');
    // Options here apply to the connection to the proxy; the upstream's TLS takes the request's.
    // The signal goes to every connection made to the proxy.
    return new HttpsProxyAgent(options.httpsProxy, { ...keepAlive, rejectUnauthorized, signal });
  }
  if (direct || options.httpProxy === undefined) return new http.Agent(keepAlive);
  const { HttpProxyAgent } = await import('http-proxy-agent');
  return new HttpProxyAgent(options.httpProxy, { ...keepAlive, rejectUnauthorized, signal });
}

function send(
  url: URL,
  init: UpstreamRequestInit,
  agent: http.Agent,
  secure: https.AgentOptions,
): Promise<UpstreamResponse> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...init.headers };
    if (init.body !== undefined) headers['content-length'] = String(Buffer.byteLength(init.body));
    const tls = url.protocol === 'https:';
    const request = (tls ? https : http).request(url, {
      method: init.method,
      headers,
      agent,
      // On the request too: through a forward proxy's tunnel, the upstream's TLS takes these.
      ...(tls ? secure : {}),
    });
    let response: http.IncomingMessage | undefined;
    let timedOut: ErrorWithCode | undefined;
    const timer = setTimeout(() => {
      // A body received in full met the deadline, even if nobody has read it yet.
      if (response?.complete) return;
      timedOut = codedError(
        `no complete answer from ${url.origin} within ${init.timeoutMs} ms`,
        'ETIMEDOUT',
      );
      // Destroys the socket (not returned to the pool) and fails the headers or body wait.
      request.destroy(timedOut);
      response?.destroy(timedOut);
      // A request still waiting for its socket (a forward proxy that never answers CONNECT) emits
      // no error when destroyed, so the wait for headers is failed here.
      reject(timedOut);
    }, init.timeoutMs);
    const done = () => clearTimeout(timer);

    request.on('error', (error) => {
      done();
      reject(timedOut ?? error);
    });
    request.on('close', () => {
      if (response === undefined) done();
    });
    request.on('response', (incoming) => {
      response = incoming;
      if (init.stream === true) done();
      incoming.on('end', done);
      incoming.on('close', done);
      // Kept so that an error before the body is read is not thrown as an unhandled event.
      incoming.on('error', () => {});
      const read = (keep: boolean) => readBody(incoming, keep, () => timedOut);
      resolve({
        status: incoming.statusCode ?? 0,
        headers: incoming.headers,
        text: () => read(true),
        dump: async () => {
          await read(false);
        },
        chunks: () => {
          incoming.setEncoding('utf8');
          return incoming;
        },
        cancel: () => {
          request.destroy();
          incoming.destroy();
        },
      });
    });
    request.end(init.body);
  });
}

function readBody(
  response: http.IncomingMessage,
  keep: boolean,
  timedOut: () => Error | undefined,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const fail = (error?: Error) =>
      reject(
        timedOut() ?? error ?? codedError('the upstream connection closed early', 'ECONNRESET'),
      );
    if (response.destroyed && !response.complete) {
      fail();
      return;
    }
    const chunks: Buffer[] = [];
    response.on('data', (chunk: Buffer) => {
      if (keep) chunks.push(chunk);
    });
    response.once('end', () => resolve(keep ? Buffer.concat(chunks).toString('utf8') : ''));
    response.once('error', fail);
    response.once('close', () => {
      if (!response.complete) fail();
    });
  });
}
