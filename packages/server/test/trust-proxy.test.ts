// Issue #40 (LOW): `TRUST_PROXY=true` believes any sender's `X-Forwarded-For` without a word, and
// a hop count (which Fastify 5.12 reads as trusting nothing) put every caller behind the load
// balancer on one rate-limit budget. A hop count now trusts the load balancer in front and
// nothing a caller writes further left; `true` gets a warning at start.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config/load.js';
import type { ServerOptions } from '../src/config/options.js';
import { type Database, openPglite } from '../src/db/database.js';
import { testConfig } from './helpers.js';

describe('trustProxy on flags-server', () => {
  // One database for every app of the suite: migrated once.
  let db: Database;
  before(async () => {
    db = await openPglite();
  });
  after(() => db.close());

  async function withApp(
    overrides: ServerOptions,
    use: (app: FastifyInstance, warnings: string[]) => Promise<void>,
  ): Promise<void> {
    const warnings: string[] = [];
    const logger = pino(
      { level: 'warn' },
      { write: (line: string) => warnings.push(JSON.parse(line).msg) },
    );
    const app = await buildApp(testConfig(overrides), { db, logger });
    try {
      await use(app, warnings);
    } finally {
      await app.close();
    }
  }

  it('reads a hop count from TRUST_PROXY', () => {
    assert.equal(loadConfig({ TRUST_PROXY: '1' }).trustProxy, 1);
  });

  it('trusts one hop: each caller behind the load balancer has its own /edge/validate budget, whatever it writes further left', async () => {
    await withApp({ trustProxy: 1, edgeValidatePerMinute: 2 }, async (app) => {
      const validate = (forwardedFor: string) =>
        app.inject({
          method: 'POST',
          url: '/edge/validate',
          remoteAddress: '10.0.0.1',
          headers: { 'x-forwarded-for': forwardedFor },
          payload: { tokens: [] },
        });
      const statuses = [];
      for (const forwardedFor of [
        '198.51.100.1, 203.0.113.8',
        '198.51.100.2, 203.0.113.8',
        '203.0.113.9',
        '203.0.113.9',
        '198.51.100.3, 203.0.113.8',
      ]) {
        statuses.push((await validate(forwardedFor)).statusCode);
      }
      assert.deepEqual(statuses, [200, 200, 200, 200, 429]);
    });
  });

  it('warns once at start when it trusts every sender, saying what to set instead', async () => {
    await withApp({ trustProxy: true }, async (_app, warnings) => {
      const trust = warnings.filter((message) => message.includes('TRUST_PROXY'));
      assert.equal(trust.length, 1, JSON.stringify(warnings));
      assert.match(trust[0] ?? '', /every sender/);
      assert.match(trust[0] ?? '', /CIDR/);
      assert.match(trust[0] ?? '', /number of proxies/);
    });
    for (const trustProxy of [1, ['10.0.0.1']]) {
      await withApp({ trustProxy }, async (_app, warnings) => {
        assert.deepEqual(
          warnings.filter((message) => message.includes('TRUST_PROXY')),
          [],
        );
      });
    }
  });
});
