import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type ContextDefaults, contextFromQuery } from '@flags/serving';
import { parse as parseQuery } from 'fast-querystring';
import { contextFromQueryString } from '../src/context/query-string.js';

/**
 * `contextFromQueryString` reads a query in one pass; the routes read it as Fastify parses it
 * (fast-querystring) and then `contextFromQuery`. Both must give the same context, or both refuse.
 */

const DEFAULTS: ContextDefaults = {
  appName: 'default-app',
  environment: undefined,
  ignoreCallerRemoteAddress: false,
};
const IP = '10.1.2.3';

type Outcome = { context: unknown } | { refused: string };

function outcome(read: () => unknown): Outcome {
  try {
    return { context: read() };
  } catch (error) {
    return { refused: (error as { code?: string }).code ?? String(error) };
  }
}

function bothWays(query: string): { onePass: Outcome; parsed: Outcome } {
  return {
    onePass: outcome(() => contextFromQueryString(query, IP, DEFAULTS)),
    parsed: outcome(() => contextFromQuery(query === '' ? {} : parseQuery(query), IP, DEFAULTS)),
  };
}

function assertSame(query: string): void {
  const { onePass, parsed } = bothWays(query);
  assert.deepStrictEqual(onePass, parsed, `query ${JSON.stringify(query)}`);
}

/** Pieces queries are made of: names, the encodings SDKs use, and what breaks parsers. */
const PIECES = [
  'userId',
  'sessionId',
  'remoteAddress',
  'appName',
  'environment',
  'currentTime',
  'properties',
  'properties[',
  'properties%5B',
  'properties%5b',
  ']',
  '%5D',
  '%5d',
  '[',
  'region',
  'plan',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'a',
  'user-1',
  '2024-01-01T00:00:00Z',
  '1700000000000',
  '=',
  '==',
  '&',
  '&&',
  '+',
  '%20',
  '%2B',
  '%26',
  '%3D',
  '%',
  '%2',
  '%ZZ',
  '%C3%A9',
  '%E9',
  '%F0%9F%98%80',
  'é',
  ' ',
  '',
];

function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state ^ (state >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0;
    state ^= state >>> 12;
    return state / 0x100000000;
  };
}

describe('contextFromQueryString', () => {
  it('reads what SDKs send as the routes do', () => {
    const sdk = new URLSearchParams({
      userId: 'user-7',
      sessionId: 's 1+2',
      remoteAddress: '172.16.0.9',
      appName: 'web',
      currentTime: '2030-01-01T00:00:00.000Z',
    });
    sdk.append('properties[region]', 'eu');
    sdk.append('properties[email]', 'A+b@example.com');
    sdk.append('plan', 'pro');
    const query = sdk.toString();
    assert.match(query, /properties%5Bregion%5D=eu/);
    assertSame(query);
    const context = contextFromQueryString(query, IP, DEFAULTS);
    assert.equal(context.sessionId, 's 1+2');
    assert.equal(context.properties?.region, 'eu');
    assert.equal(context.properties?.email, 'A+b@example.com');
    assert.equal(context.properties?.plan, 'pro');
    assert.equal(context.currentTime?.toISOString(), '2030-01-01T00:00:00.000Z');
  });

  it('decodes a property name that holds an escape or a malformed one, as the routes do', () => {
    for (const query of [
      'properties%5Ba%20b%5D=1',
      'properties%5Ba%5Bb%5D=1',
      'properties%5Ba+b%5D=1',
      'properties%5Ba%ZZ%5D=1',
      'properties%5B%5D=1',
      'properties%5bx%5d=1',
      'properties%5Bx%5D%5D=1',
      'properties%5Bx%5=1',
      'properties%5Cx%5D=1',
      'properties%5Bx%4D=1',
    ]) {
      assertSame(query);
    }
    assert.equal(
      contextFromQueryString('properties%5Ba%20b%5D=1', IP, DEFAULTS).properties?.['a b'],
      '1',
    );
  });

  it('refuses a repeated parameter, under any spelling of its key', () => {
    for (const query of [
      'userId=a&userId=b',
      'userId=&userId=b',
      'userId&userId',
      'properties[a]=1&properties%5Ba%5D=2',
      'properties%5Ba%5D=&properties[a]=2',
      'properties[__proto__]=1&properties[__proto__]=2',
      'x=&x=',
      '__proto__=1&__proto__=2',
      '=1&=2',
      'properties=1',
    ]) {
      const { onePass, parsed } = bothWays(query);
      assert.deepStrictEqual(onePass, { refused: 'BAD_CONTEXT' }, query);
      assert.deepStrictEqual(parsed, onePass, query);
    }
    // Different keys, not a repeat: `properties[x]` and a top-level `x` (the explicit one wins).
    assertSame('properties[x]=1&x=2');
    assert.equal(contextFromQueryString('x=2&properties[x]=1', IP, DEFAULTS).properties?.x, '1');
  });

  it('gives the same context as fast-querystring and contextFromQuery for 20,000 generated queries', () => {
    const random = seeded(20261126);
    for (let n = 0; n < 20_000; n++) {
      let query = '';
      const pieces = Math.floor(random() * 12);
      for (let p = 0; p < pieces; p++) query += PIECES[Math.floor(random() * PIECES.length)];
      assertSame(query);
    }
  });
});
