import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { frontendQuery, generateContexts, generateFlagSet } from '../helpers/differential.js';
import { type FlagSetStack, startFlagSetStack } from '../helpers/flag-set-stack.js';

const SEED = 3636;
const FLAGS = 80;
const CONTEXTS = 200;
const ENVIRONMENTS = ['development', 'production'] as const;
const flagSet = generateFlagSet(SEED, FLAGS);
const contexts = generateContexts(SEED, CONTEXTS);

const secret = () => randomBytes(16).toString('hex');
const ADMIN = `*:*.${secret()}`;
const CLIENT_TOKENS = ENVIRONMENTS.map((environment) => `*:${environment}.${secret()}`);
const FRONTEND_TOKENS = ENVIRONMENTS.map((environment) => `*:${environment}.${secret()}`);

/**
 * Both services answer `/api/frontend` with `@flags/serving`'s routes, state and answer writer:
 * for one flag set (flags-server's, which flags-proxy syncs) and the same contexts, the same bytes
 * and the same ETag, GET and POST, in every environment.
 */
describe('flags-proxy and flags-server serve /api/frontend from one library', () => {
  let stack: FlagSetStack;

  before(async () => {
    stack = await startFlagSetStack({
      flagSet,
      environments: ENVIRONMENTS,
      adminToken: ADMIN,
      clientTokens: CLIENT_TOKENS,
      frontendTokens: FRONTEND_TOKENS,
    });
  });

  after(async () => {
    await stack?.close();
  });

  it(`answers ${CONTEXTS} contexts × ${ENVIRONMENTS.length} environments with equal bodies and ETags`, async () => {
    const differences: string[] = [];
    let toggles = 0;
    for (const [i, environment] of ENVIRONMENTS.entries()) {
      const token = FRONTEND_TOKENS[i]!;
      for (const context of contexts) {
        const query = frontendQuery(context);
        const answers = await Promise.all(
          [stack.serverUrl, stack.proxyUrl].flatMap((base) => [
            fetch(`${base}/api/frontend?${query}`, { headers: { authorization: token } }),
            fetch(`${base}/api/frontend`, {
              method: 'POST',
              headers: { authorization: token, 'content-type': 'application/json' },
              body: JSON.stringify(context),
            }),
          ]),
        );
        const [serverGet, serverPost, proxyGet, proxyPost] = await Promise.all(
          answers.map(async (response) => ({
            status: response.status,
            etag: response.headers.get('etag'),
            body: await response.text(),
          })),
        );
        for (const [method, ours, theirs] of [
          ['GET', serverGet!, proxyGet!],
          ['POST', serverPost!, proxyPost!],
        ] as const) {
          assert.equal(ours.status, 200, ours.body);
          if (ours.body !== theirs.body || ours.etag !== theirs.etag) {
            differences.push(
              `${environment} ${method} ${query}: server ${ours.etag} ${ours.body} ≠ proxy ${theirs.etag} ${theirs.body}`,
            );
          }
        }
        toggles += (JSON.parse(serverGet!.body) as { toggles: unknown[] }).toggles.length;
      }
    }
    assert.deepEqual(differences.slice(0, 10), [], `${differences.length} differences`);
    // A comparison of empty answers would prove little.
    assert.ok(toggles > CONTEXTS * ENVIRONMENTS.length * 5, `${toggles} toggles compared`);
  });
});
