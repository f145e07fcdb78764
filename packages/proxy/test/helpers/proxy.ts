import type { AddressInfo } from 'node:net';
import { createProxy, type ProxyApp, type ProxyOptions } from '@flags/proxy';
import { request } from 'undici';
import { FakeUpstream } from './fake-upstream.js';
import { RecordingLogger } from './recording-logger.js';

export const CLIENT_KEY = 'client-key-1';
export const API_TOKEN = 'upstream-token-secret';

export interface Running {
  readonly upstream: FakeUpstream;
  readonly proxy: ProxyApp;
  readonly log: RecordingLogger;
  readonly base: string;
  close(): Promise<void>;
}

/** A real proxy on a real port, syncing from a real fake upstream. */
export async function startProxy(
  payload: unknown,
  options: ProxyOptions = {},
  setup: (upstream: FakeUpstream) => void = () => {},
): Promise<Running> {
  const upstream = new FakeUpstream(payload);
  setup(upstream);
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
  await proxy.app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(proxy.app.server.address() as AddressInfo).port}`;
  return {
    upstream,
    proxy,
    log,
    base,
    async close() {
      await proxy.app.close();
      await upstream.stop();
    },
  };
}

export interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
  // biome-ignore lint/suspicious/noExplicitAny: response bodies are checked by the assertions
  json(): any;
}

/** One HTTP request (undici: no implicit Content-Type for string bodies). */
export async function call(
  base: string,
  method: string,
  path: string,
  init: { headers?: Record<string, string>; body?: string } = {},
): Promise<Answer> {
  const response = await request(`${base}${path}`, {
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
