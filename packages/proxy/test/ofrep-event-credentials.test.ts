import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { EventCredentials } from '../src/auth/event-credential.js';
import { type OpenedStream, openEventStream } from './helpers/event-stream-client.js';
import { CLIENT_KEY, call, type Listening, startProxy } from './helpers/proxy.js';

/**
 * Issue #40: the OFREP event-stream credential was signed with a key derived from the public
 * client key, so anyone holding that key could mint one with any expiry. It is now signed with a
 * secret callers never see, and an expiry beyond what this proxy issues is refused.
 */

const SHARED_SECRET = 'a-long-random-secret-for-ofrep-event-credentials';
const PAYLOAD = { version: 2, features: [{ name: 'first', enabled: true, strategies: [] }] };
const LIFETIME_MS = 15 * 60_000;
const YEAR_MS = 365 * 24 * 3_600_000;

interface Scope {
  readonly e: string;
  readonly p: readonly string[];
  readonly r: string;
  readonly x: number;
}

/** What anyone holding the client key could compute before: the signing key derived from it. */
function mintWithClientKey(clientKey: string, scope: Scope): string {
  const secret = createHmac('sha256', clientKey)
    .update('flags-proxy ofrep event stream v1')
    .digest();
  const id = createHmac('sha256', secret).update('key id').digest('base64url').slice(0, 12);
  const signed = `${id}.${Buffer.from(JSON.stringify(scope)).toString('base64url')}`;
  return `${signed}.${createHmac('sha256', secret).update(signed).digest('base64url')}`;
}

describe('OFREP event-stream credentials', () => {
  let first: Listening;
  let second: Listening;
  let other: Listening;
  const held: OpenedStream[] = [];

  /** The credential of a bulk answer of `run` to the client key. */
  const credentialOf = async (run: Listening) => {
    const answer = await call(run.base, 'POST', '/ofrep/v1/evaluate/flags', {
      headers: { authorization: CLIENT_KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ context: { targetingKey: 'u1' } }),
    });
    assert.equal(answer.status, 200, answer.text);
    const uri = new URL(answer.json().eventStreams[0].endpoint.requestUri, run.base);
    return uri.searchParams.get('token') as string;
  };
  const scopeOf = (credential: string): Scope =>
    JSON.parse(Buffer.from(credential.split('.')[1] as string, 'base64url').toString());
  const streamAt = async (run: Listening, credential: string) => {
    const stream = await openEventStream(
      `${run.base}/ofrep/v1/events?token=${encodeURIComponent(credential)}`,
    );
    held.push(stream);
    return stream;
  };
  const assertRefused = (stream: OpenedStream) => {
    assert.equal(stream.status, 401, stream.text);
    assert.equal(JSON.parse(stream.text).name, 'AuthenticationRequired');
  };

  before(async () => {
    const options = { metricsInterval: 0, ofrepEventCredentialMinutes: LIFETIME_MS / 60_000 };
    [first, second, other] = await Promise.all([
      startProxy(PAYLOAD, { ...options, ofrepEventSecret: SHARED_SECRET }, { listen: true }),
      // Another upstream token, the same configured secret: a fleet behind one load balancer.
      startProxy(
        PAYLOAD,
        { ...options, ofrepEventSecret: SHARED_SECRET, flagsApiToken: 'another-upstream-token' },
        { listen: true },
      ),
      // No secret configured: one derived from its upstream token, which differs.
      startProxy(PAYLOAD, { ...options, flagsApiToken: 'third-upstream-token' }, { listen: true }),
    ]);
    await Promise.all([first, second, other].map((run) => run.proxy.poller.ready));
  });
  after(async () => {
    for (const stream of held) stream.close();
    await Promise.all([first, second, other].map((run) => run.close()));
  });

  it('opens a stream with a fresh credential', async () => {
    assert.equal((await streamAt(first, await credentialOf(first))).status, 200);
  });

  it('refuses a credential minted from the public client key', async () => {
    const scope = scopeOf(await credentialOf(first));
    assertRefused(await streamAt(first, mintWithClientKey(CLIENT_KEY, scope)));
  });

  it('refuses a correctly signed credential whose expiry lies beyond the lifetime it allows', async () => {
    const scope = scopeOf(await credentialOf(first));
    const credentials = new EventCredentials({
      secret: SHARED_SECRET,
      keys: [CLIENT_KEY],
      lifetimeMs: LIFETIME_MS,
    });
    const issue = (nowMs: number) =>
      credentials.issue(
        CLIENT_KEY,
        { environment: scope.e, projects: scope.p, revision: scope.r },
        nowMs,
      );
    // Issued by the proxy's own signer, as now: accepted.
    assert.equal((await streamAt(first, issue(Date.now()))).status, 200);
    // The same signer told it is a year from now: a year-long credential.
    assertRefused(await streamAt(first, issue(Date.now() + YEAR_MS)));
  });

  it('is accepted by every proxy with the same secret, and only by them', async () => {
    const credential = await credentialOf(first);
    assert.equal((await streamAt(second, credential)).status, 200);
    assertRefused(await streamAt(other, credential));
    assert.equal((await streamAt(first, await credentialOf(second))).status, 200);
  });
});
