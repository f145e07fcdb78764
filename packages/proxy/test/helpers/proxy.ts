import type { AddressInfo } from 'node:net';
import { createProxy, type ProxyApp, type ProxyOptions } from '@flags/proxy';
import { request } from 'undici';
import { FakeUpstream } from './fake-upstream.js';
import { RecordingLogger } from './recording-logger.js';

export const CLIENT_KEY = 'client-key-1';
export const API_TOKEN = 'upstream-token-secret';

/** A real proxy syncing from a real fake upstream; `call(running, …)` talks to it by `inject`. */
export interface Running<Upstream extends FakeUpstream = FakeUpstream> {
  readonly upstream: Upstream;
  readonly proxy: ProxyApp;
  readonly log: RecordingLogger;
  close(): Promise<void>;
}

/** A `Running` proxy that also listens on a real port, for callers that need a URL (SDKs, browsers). */
export interface Listening extends Running {
  /** `http://127.0.0.1:<port>` */
  readonly base: string;
}

export interface StartOptions<Upstream extends FakeUpstream = FakeUpstream> {
  /** Prepares the fake upstream before it starts (a failure mode, TLS). */
  readonly upstream?: (upstream: Upstream) => void;
  /** The fake upstream to serve `payload` (a `FakeUpstream` unless given). */
  readonly serve?: (payload: unknown) => Upstream;
  /** Listens on a real port too; only where the socket is what the test is about. */
  readonly listen?: boolean;
}

/**
 * A real proxy syncing from a real fake upstream (the sync over a socket is part of every test).
 * Requests reach the proxy through Fastify's `inject` unless `listen` is set.
 */
export async function startProxy<Upstream extends FakeUpstream>(
  payload: unknown,
  options: ProxyOptions,
  start: StartOptions<Upstream> & { serve: (payload: unknown) => Upstream; listen?: false },
): Promise<Running<Upstream>>;
export async function startProxy(
  payload: unknown,
  options?: ProxyOptions,
  start?: StartOptions & { listen?: false },
): Promise<Running>;
export async function startProxy(
  payload: unknown,
  options: ProxyOptions,
  start: StartOptions & { listen: true },
): Promise<Listening>;
export async function startProxy(
  payload: unknown,
  options: ProxyOptions = {},
  start: StartOptions = {},
): Promise<Running | Listening> {
  const upstream = start.serve?.(payload) ?? new FakeUpstream(payload);
  start.upstream?.(upstream);
  await upstream.start();
  const log = new RecordingLogger();
  const proxy = await createProxy({
    flagsUrl: upstream.url,
    flagsApiToken: API_TOKEN,
    clientKeys: [CLIENT_KEY],
    refreshInterval: 50,
    logger: log,
    ...options,
  });
  const running: Running = {
    upstream,
    proxy,
    log,
    async close() {
      await proxy.app.close();
      await upstream.stop();
    },
  };
  if (start.listen !== true) return running;
  await proxy.app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(proxy.app.server.address() as AddressInfo).port}`;
  return { ...running, base };
}

export interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
  // biome-ignore lint/suspicious/noExplicitAny: response bodies are checked by the assertions
  json(): any;
}

export interface RequestInit {
  readonly headers?: Record<string, string>;
  readonly body?: string;
}

/**
 * One request: to a `Running` proxy through `inject` (no socket; the peer address is 127.0.0.1),
 * or to a base URL over HTTP with undici. Neither adds a Content-Type to a string body.
 */
export async function call(
  target: Running | string,
  method: string,
  path: string,
  init: RequestInit = {},
): Promise<Answer> {
  if (typeof target === 'string') return overHttp(`${target}${path}`, method, init);
  const response = await target.proxy.app.inject({
    method: method as 'GET',
    url: path,
    headers: init.headers,
    payload: init.body,
  });
  const text = response.payload;
  return {
    status: response.statusCode,
    headers: headerTexts(response.headers),
    text,
    json: () => JSON.parse(text),
  };
}

async function overHttp(url: string, method: string, init: RequestInit): Promise<Answer> {
  const response = await request(url, {
    method: method as 'GET',
    headers: init.headers,
    body: init.body,
  });
  const text = await response.body.text();
  return {
    status: response.statusCode,
    headers: response.headers,
    text,
    json: () => JSON.parse(text),
  };
}

/** Header values as they arrive over the wire: numbers (a Content-Length) become text. */
function headerTexts(
  headers: Record<string, string | number | string[] | undefined>,
): Record<string, string | string[] | undefined> {
  return Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [
      name,
      typeof value === 'number' ? String(value) : value,
    ]),
  );
}

export function withKey(headers: Record<string, string> = {}): Record<string, string> {
  return { authorization: CLIENT_KEY, ...headers };
}

export async function waitFor(
  check: () => boolean | Promise<boolean>,
  timeoutMs = 5000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out waiting for a condition');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
