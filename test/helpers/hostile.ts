import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { SeededPicker } from './seeded-random.js';

/**
 * Hostile input for the fuzz suites of both services: a seeded generator (runs are reproducible
 * from the seed), prototype-pollution probes, a heap measurement after GC and a raw-socket client
 * for what an HTTP library would refuse to send.
 */

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** `encodeURIComponent` that takes any string (lone surrogates become U+FFFD). */
export function percent(text: string): string {
  return encodeURIComponent(text.replace(LONE_SURROGATE, '\ufffd'));
}

/** Leaves what a request line cannot carry (controls, spaces, non-ASCII, `#`) percent-encoded. */
function requestLineSafe(text: string): string {
  return text.replace(/[^\x21-\x7e]|#/gu, (c) => percent(c));
}

/** Keys that would pollute prototypes if a parser or a context builder assigned them blindly. */
export const POISON_KEYS = [
  '__proto__',
  'constructor',
  'prototype',
  '__proto__[x]',
  'constructor[prototype][x]',
  'properties[__proto__][x]',
  'properties[__proto__]',
  'properties[constructor][prototype][x]',
  'properties[constructor]',
  'properties[prototype]',
  'toString',
  'hasOwnProperty',
  'valueOf',
  '__defineGetter__',
] as const;

const CONTEXT_KEYS = [
  'appName',
  'environment',
  'userId',
  'sessionId',
  'remoteAddress',
  'currentTime',
  'properties',
  'properties[region]',
  'properties[]',
  'properties[a][b]',
  'userId[]',
  'x',
] as const;

const CONTENT_TYPES = [
  undefined,
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=utf-16',
  'application/vnd.api+json',
  'text/plain',
  'text/html',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/octet-stream',
  '*/*',
  'json',
  ';;;',
  'application/json, text/plain',
] as const;

export interface HostileBody {
  readonly payload: string | undefined;
  readonly contentType: string | undefined;
}

export class Hostile extends SeededPicker {
  /** A short string mixing ASCII, Unicode, control characters, quotes and broken escapes. */
  text(maxLength = 24): string {
    const pieces = [
      () => String.fromCharCode(97 + this.int(26)),
      () => String(this.int(10)),
      () => this.pick(['"', "'", '\\', '<', '>', '&', '=', '[', ']', '%', '+', ' ', '#', '?']),
      () => this.pick(['é', '日本', '😀', '\u202e', '\ufeff', '\ud800']),
      () => String.fromCharCode(this.int(32)),
      () => this.pick(['%00', '%zz', '%E0%A4%A', '%ff', '%2e%2e%2f', '%5B', '%5D']),
    ];
    let out = '';
    const length = this.int(maxLength + 1);
    for (let i = 0; i < length; i++) out += this.pick(pieces)();
    return out;
  }

  /** 10 kB to 200 kB of one character. */
  huge(): string {
    return this.pick(['x', '9', '[', '%', 'é']).repeat(10_000 + this.int(90_000));
  }

  queryKey(): string {
    const roll = this.random();
    if (roll < 0.3) return this.pick(POISON_KEYS);
    if (roll < 0.6) return this.pick(CONTEXT_KEYS);
    if (roll < 0.7) {
      // Deep nesting: a[b][c][d]...
      const depth = 1 + this.int(200);
      let key = 'a';
      for (let i = 0; i < depth; i++)
        key += `[${this.pick(['b', '__proto__', 'constructor', '', '0'])}]`;
      return key;
    }
    if (roll < 0.75) return this.huge().slice(0, 5000);
    return this.text(12);
  }

  queryValue(): string {
    const roll = this.random();
    if (roll < 0.05) return this.huge();
    if (roll < 0.15) return '';
    if (roll < 0.25) return this.pick(['1', '-1', '1e309', 'NaN', 'true', 'null', '2024-13-45']);
    return this.text(30);
  }

  /** A raw query string (not necessarily well-formed): keys repeated, encoded and not. */
  query(): string {
    const parts: string[] = [];
    const count = this.int(12);
    for (let i = 0; i < count; i++) {
      const key = this.queryKey();
      const value = this.queryValue();
      const encode = this.chance(0.5);
      const pair = encode ? `${percent(key)}=${percent(value)}` : `${key}=${value}`;
      parts.push(pair);
      if (this.chance(0.1)) parts.push(pair);
      if (this.chance(0.05)) parts.push(encode ? percent(key) : key);
    }
    const raw = parts.join(this.pick(['&', '&', '&', '&&', ';']));
    return requestLineSafe(raw);
  }

  /** A JSON key, sometimes a poisonous one (written raw, so `__proto__` really is a key). */
  jsonKey(): string {
    const roll = this.random();
    if (roll < 0.25) return this.pick(['__proto__', 'constructor', 'prototype', 'x']);
    if (roll < 0.55)
      return this.pick([
        'context',
        'toggles',
        'properties',
        'userId',
        'appName',
        'environment',
        'currentTime',
        'sessionId',
        'remoteAddress',
        'targetingKey',
        'bucket',
        'instanceId',
        'sdkVersion',
        'strategies',
        'start',
        'stop',
        'project',
        'data',
        'features',
        'name',
      ]);
    return this.text(10);
  }

  /** Random JSON text of bounded size: wrong types everywhere, poisonous keys, odd numbers. */
  json(depth = 0): string {
    const roll = this.random();
    if (depth > 4 || roll < 0.35) {
      return this.pick([
        () => JSON.stringify(this.text(20)),
        () => String(this.int(1000) - 500),
        () => this.pick(['1e308', '-0', '0.1', '12345678901234567890', '1e-400']),
        () => this.pick(['true', 'false', 'null']),
        () => JSON.stringify(this.huge().slice(0, 2000)),
        () => JSON.stringify(new Date(this.int(2 ** 31) * 1000).toISOString()),
      ])();
    }
    if (roll < 0.6) {
      const items = Array.from({ length: this.int(6) }, () => this.json(depth + 1));
      return `[${items.join(',')}]`;
    }
    const members = Array.from(
      { length: this.int(7) },
      () => `${JSON.stringify(this.jsonKey())}:${this.json(depth + 1)}`,
    );
    return `{${members.join(',')}}`;
  }

  /** `levels` nested arrays or objects, optionally with a poisonous key at the bottom. */
  deep(levels: number): string {
    if (this.chance(0.5)) return `${'['.repeat(levels)}${']'.repeat(levels)}`;
    const open = '{"a":'.repeat(levels);
    return `${open}{"__proto__":{"x":1}}${'}'.repeat(levels)}`;
  }

  /** A request body: valid-looking, wrong, truncated, not JSON, very deep or oversized. */
  body(limitBytes: number): HostileBody {
    const roll = this.random();
    const contentType = this.chance(0.7) ? 'application/json' : this.pick(CONTENT_TYPES);
    if (roll < 0.4) return { payload: this.json(), contentType };
    if (roll < 0.5) {
      const context = this.json(1);
      return { payload: `{"context":${context},"toggles":${this.json(2)}}`, contentType };
    }
    if (roll < 0.58) return { payload: this.json().slice(0, -1 - this.int(3)), contentType };
    if (roll < 0.65) return { payload: this.text(60), contentType };
    if (roll < 0.7) return { payload: this.deep(10_000), contentType: 'application/json' };
    if (roll < 0.73) {
      return {
        payload: `{"context":{"userId":"${'x'.repeat(limitBytes + this.int(limitBytes))}"}}`,
        contentType: 'application/json',
      };
    }
    if (roll < 0.78) return { payload: '', contentType };
    if (roll < 0.85) return { payload: undefined, contentType };
    return {
      payload: this.pick([
        '{"__proto__":{"x":1},"context":{"properties":{"__proto__":{"x":1}}}}',
        '{"constructor":{"prototype":{"x":1}},"context":{"constructor":{"prototype":{"x":1}}}}',
        '{"context":{"properties":{"constructor":"x","prototype":"y","__proto__":"z"}}}',
        '{"context":{"__proto__":{"userId":"admin"},"properties":[1,2]}}',
        '{"toggles":{"__proto__":[]}}',
        '{"context":null,"toggles":[null,{},[],1e400]}',
      ]),
      contentType: 'application/json',
    };
  }

  /** Extra headers: huge, repeated-looking, forwarded chains, conditional and CORS ones. */
  headers(): Record<string, string> {
    const out: Record<string, string> = {};
    const count = this.int(4);
    for (let i = 0; i < count; i++) {
      const [name, value] = this.pick<() => [string, string]>([
        () => [
          'x-forwarded-for',
          Array.from({ length: 1 + this.int(50) }, () => this.ip()).join(', '),
        ],
        () => [
          'if-none-match',
          this.pick(['*', 'W/"x"', '"', this.text(20).replace(/[^\x20-\x7e]/g, '')]),
        ],
        () => [
          'origin',
          this.pick([
            'http://evil.example',
            'null',
            '*',
            this.text(10).replace(/[^\x21-\x7e]/g, ''),
          ]),
        ],
        () => ['accept-encoding', this.pick(['gzip', 'br', 'identity;q=0', '*', 'x'.repeat(2000)])],
        () => ['x-huge', 'h'.repeat(1 + this.int(8000))],
        () => ['unleash-appname', this.text(20).replace(/[^\x20-\x7e]/g, '')],
        () => ['content-length', String(this.int(100))],
        () => ['transfer-encoding', 'chunked'],
      ])();
      if (name === 'content-length' || name === 'transfer-encoding') continue; // inject sets these
      out[name] = value;
    }
    return out;
  }

  ip(): string {
    if (this.chance(0.2)) return this.pick(['::1', 'fe80::1%eth0', 'unknown', '999.1.1.1', '']);
    return Array.from({ length: 4 }, () => this.int(256)).join('.');
  }
}

/** Own property names of the prototypes a pollution would change. */
export function prototypeKeys(): string[] {
  return [Object.prototype, Array.prototype, Function.prototype, String.prototype].flatMap(
    (proto) => Object.getOwnPropertyNames(proto).sort(),
  );
}

export function assertNoPollution(before: readonly string[]): void {
  const probe = {} as Record<string, unknown>;
  assert.equal(probe.x, undefined, '({}).x is still undefined');
  assert.equal(probe.userId, undefined);
  assert.equal(([] as unknown as Record<string, unknown>).x, undefined);
  assert.deepEqual(prototypeKeys(), before, 'no prototype gained a property');
}

let collect: (() => void) | undefined;

/** Heap in use after a full GC (exposes `gc` when the runner did not). */
export async function heapAfterGc(): Promise<number> {
  if (collect === undefined) {
    const global = globalThis as { gc?: () => void };
    if (typeof global.gc === 'function') collect = global.gc;
    else {
      setFlagsFromString('--expose-gc');
      collect = runInNewContext('gc') as () => void;
    }
  }
  for (let i = 0; i < 3; i++) {
    collect();
    await new Promise((resolve) => setImmediate(resolve));
  }
  return process.memoryUsage().heapUsed;
}

export interface ErrorShape {
  readonly code: string;
  readonly name: string;
  readonly message: string;
  readonly details: readonly { readonly message: string }[];
}

/** True when `text` is the JSON error shape `{ code, name, message, details: [{ message }] }`. */
export function isErrorBody(text: string): boolean {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return false;
  }
  const error = body as Partial<ErrorShape> | null;
  return (
    error !== null &&
    typeof error === 'object' &&
    typeof error.code === 'string' &&
    /^[A-Z][A-Z0-9_]*$/.test(error.code) &&
    typeof error.name === 'string' &&
    typeof error.message === 'string' &&
    Array.isArray(error.details) &&
    error.details.length > 0 &&
    error.details.every((detail) => typeof detail?.message === 'string')
  );
}

/** Sends the start of a request and goes away (a client that hangs up mid-body). */
export function abandonedRequest(port: number, raw: string): Promise<void> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(raw);
      setTimeout(() => {
        socket.destroy();
        resolve();
      }, 5);
    });
    socket.on('error', () => resolve());
  });
}

export interface RawAnswer {
  readonly status: number;
  readonly head: string;
  readonly body: string;
}

/** How long `rawRequest` waits between the pieces of a request, so that each arrives on its own. */
const PIECE_PAUSE_MS = 30;

/**
 * Writes `raw` bytes to a fresh connection and reads the answer until the server closes or the
 * message is complete; for requests an HTTP client would refuse to send (huge or binary headers).
 * A list of pieces is written one at a time, with a pause between them (a request that arrives
 * in parts).
 */
export function rawRequest(
  port: number,
  raw: string | Buffer | readonly (string | Buffer)[],
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let settled = false;
    const finish = () => {
      if (settled) return;
      settled = true;
      socket.destroy();
      const text = Buffer.concat(chunks).toString('latin1');
      const split = text.indexOf('\r\n\r\n');
      const head = split < 0 ? text : text.slice(0, split);
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
      resolve({ status, head, body: split < 0 ? '' : text.slice(split + 4) });
    };
    const complete = () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const split = text.indexOf('\r\n\r\n');
      if (split < 0) return false;
      const length = /\r\ncontent-length: (\d+)/i.exec(text.slice(0, split))?.[1];
      return length !== undefined && text.length - split - 4 >= Number(length);
    };
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      if (complete()) finish();
    });
    socket.on('end', finish);
    socket.on('close', finish);
    socket.on('error', (error: NodeJS.ErrnoException) => {
      // The server may reset a connection it refused (after answering): keep what was read.
      if (chunks.length > 0 || error.code === 'ECONNRESET' || error.code === 'EPIPE') finish();
      else if (!settled) {
        settled = true;
        reject(error);
      }
    });
    socket.setTimeout(10_000, () => {
      if (!settled) {
        settled = true;
        socket.destroy();
        reject(new Error('raw request timed out'));
      }
    });
    const [first, ...rest] = typeof raw === 'string' || Buffer.isBuffer(raw) ? [raw] : raw;
    if (first !== undefined) socket.write(first);
    rest.forEach((piece, i) => {
      setTimeout(
        () => {
          if (!settled) socket.write(piece);
        },
        (i + 1) * PIECE_PAUSE_MS,
      );
    });
  });
}

/** One generated request, as `app.inject` takes it. */
export interface GeneratedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly payload: string | undefined;
}

interface Injectable {
  inject(options: {
    method: 'GET';
    url: string;
    headers: Record<string, string>;
    payload?: string;
  }): Promise<{ statusCode: number; body: string }>;
}

export interface FuzzResult {
  /** At most 20 descriptions of answers `check` refused. */
  readonly problems: string[];
  readonly growthMb: number;
  /** One printable line: requests, time, status counts, heap before and after. */
  readonly summary: string;
}

/**
 * Sends `count` generated requests through `app.inject`, checks each answer, and measures the
 * heap after GC once 500 requests have warmed the app up and again at the end.
 */
export async function fuzzInject(
  app: Injectable,
  count: number,
  next: () => GeneratedRequest,
  check: (request: GeneratedRequest, status: number, body: string) => string | undefined,
): Promise<FuzzResult> {
  const statuses = new Map<number, number>();
  const problems: string[] = [];
  const run = async (n: number) => {
    for (let i = 0; i < n; i++) {
      const request = next();
      const answer = await app.inject({
        method: request.method as 'GET',
        url: request.url,
        headers: request.headers,
        ...(request.payload === undefined ? {} : { payload: request.payload }),
      });
      statuses.set(answer.statusCode, (statuses.get(answer.statusCode) ?? 0) + 1);
      const problem = check(request, answer.statusCode, answer.body);
      if (problem !== undefined && problems.length < 20) {
        problems.push(
          `${problem} ← ${request.method} ${request.url.slice(0, 200)} ${String(request.payload).slice(0, 300)}`,
        );
      }
    }
  };
  const started = Date.now();
  await run(500);
  const baseline = await heapAfterGc();
  await run(count - 500);
  const end = await heapAfterGc();
  const seconds = (Date.now() - started) / 1000;
  const growthMb = (end - baseline) / 2 ** 20;
  const summary =
    `${count} requests in ${seconds.toFixed(1)} s; statuses ` +
    `${JSON.stringify(Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])))}; ` +
    `heap after GC ${(baseline / 2 ** 20).toFixed(1)} → ${(end / 2 ** 20).toFixed(1)} MB ` +
    `(${growthMb >= 0 ? '+' : ''}${growthMb.toFixed(1)} MB)`;
  return { problems, growthMb, summary };
}
