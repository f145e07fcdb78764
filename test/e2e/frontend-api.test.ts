import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import {
  frontendQuery,
  type GeneratedContext,
  generateContexts,
  generateFlagSet,
} from '../helpers/differential.js';
import { type FlagSetStack, startFlagSetStack } from '../helpers/flag-set-stack.js';
import {
  startUnleashServer,
  UNLEASH_ENVIRONMENTS,
  UNLEASH_VERSION,
  type UnleashEnvironment,
  type UnleashServer,
  unleashServerSkip,
} from '../helpers/unleash-server.js';

const SEED = 4242;
const FLAGS = 120;
const CONTEXTS = 200;
const flagSet = generateFlagSet(SEED, FLAGS);
const contexts = generateContexts(SEED, CONTEXTS);

const secret = () => randomBytes(16).toString('hex');
const ADMIN = `*:*.${secret()}`;
const CLIENT_TOKENS: Record<UnleashEnvironment, string> = {
  development: `*:development.${secret()}`,
  production: `*:production.${secret()}`,
};
const FRONTEND_TOKENS: Record<UnleashEnvironment, string> = {
  development: `*:development.${secret()}`,
  production: `*:production.${secret()}`,
};

interface Toggle {
  name: string;
  enabled: boolean;
  variant: { name: string; enabled: boolean; payload?: unknown; [field: string]: unknown };
  impressionData: boolean;
}

interface Answer {
  readonly body: string;
  readonly toggles: Toggle[];
  readonly etag: string | null;
}

async function frontend(base: string, token: string, context: GeneratedContext): Promise<Answer> {
  const response = await fetch(`${base}/api/frontend?${frontendQuery(context)}`, {
    headers: { authorization: token },
  });
  const text = await response.text();
  assert.equal(response.status, 200, `${base}: ${text}`);
  return {
    body: text,
    toggles: (JSON.parse(text) as { toggles: Toggle[] }).toggles,
    etag: response.headers.get('etag'),
  };
}

/**
 * The flags of `environment` whose parent must be off (`enabled: false`) and is disabled there.
 * unleash-server's frontend API reads only the flags enabled in the environment
 * (`client-feature-toggle-read-model.js`: `.where('fe.enabled', true)`), so such a parent is unknown
 * to it, the dependency counts as unmet and the child is never listed; the SDKs, Unleash Edge and
 * flags-proxy see every flag of the environment and enable the child as its strategies say. The
 * frontend API of flags-server answers as they do.
 */
function childrenOfDisabledParents(environment: UnleashEnvironment): Set<string> {
  const document = flagSet.documents[environment];
  const disabled = new Set(
    (document.featureEnvironments ?? [])
      .filter((entry) => !entry.enabled)
      .map((entry) => entry.name),
  );
  return new Set(
    (document.dependencies ?? [])
      .filter(({ dependencies }) =>
        dependencies.some((parent) => parent.enabled === false && disabled.has(parent.feature)),
      )
      .map(({ feature }) => feature),
  );
}

/**
 * One line per flag whose answers differ: its name, the context and both answers. The order of
 * the lists is left out: unleash-server lists toggles in no particular order (neither by name nor
 * as stored), flags-server and flags-proxy by name, as Unleash Edge does.
 */
function differences(
  environment: UnleashEnvironment,
  context: GeneratedContext,
  ours: readonly Toggle[],
  theirs: readonly Toggle[],
  unlisted: ReadonlySet<string>,
): string[] {
  const byName = (toggles: readonly Toggle[]) => new Map(toggles.map((t) => [t.name, t]));
  const mine = byName(ours);
  const reference = byName(theirs);
  const found: string[] = [];
  for (const name of new Set([...mine.keys(), ...reference.keys()])) {
    if (unlisted.has(name)) {
      if (reference.has(name)) found.push(`${environment} ${name}: listed by unleash-server`);
      continue;
    }
    // Field order is no part of an answer's meaning.
    const a = mine.get(name) ?? null;
    const b = reference.get(name) ?? null;
    if (!isDeepStrictEqual(a, b)) {
      found.push(
        `${environment} ${name} for ${JSON.stringify(context)}: ${JSON.stringify(a)} ≠ ${JSON.stringify(b)}`,
      );
    }
  }
  return found;
}

/**
 * Acceptance 2 of issue 15: the same generated flags imported into flags-server and into the real
 * unleash-server; for every context of each environment, flags-server's `/api/frontend` answers
 * what unleash-server's does, and flags-proxy (fed by flags-server with client tokens, asked with
 * flags-server's frontend tokens) answers the same toggles with the same ETags.
 */
describe(
  `the frontend API of flags-server and flags-proxy against unleash-server ${UNLEASH_VERSION}`,
  { skip: unleashServerSkip },
  () => {
    let unleash: UnleashServer;
    const unleashTokens = new Map<UnleashEnvironment, string>();
    let stack: FlagSetStack;

    before(async () => {
      unleash = await startUnleashServer();
      for (const segment of flagSet.segments) await unleash.createSegment(segment);
      for (const environment of UNLEASH_ENVIRONMENTS) {
        await unleash.importFlags(flagSet.documents[environment], environment);
        unleashTokens.set(
          environment,
          await unleash.createToken({ type: 'frontend', environment }),
        );
      }

      stack = await startFlagSetStack({
        flagSet,
        environments: UNLEASH_ENVIRONMENTS,
        adminToken: ADMIN,
        clientTokens: Object.values(CLIENT_TOKENS),
        frontendTokens: Object.values(FRONTEND_TOKENS),
      });
    });

    after(async () => {
      await stack?.close();
      await unleash?.stop();
    });

    it(`answers ${CONTEXTS} contexts per environment as unleash-server does; flags-proxy agrees, ETags included`, async (t) => {
      const mismatches: string[] = [];
      let toggles = 0;
      let variants = 0;
      let same = 0;
      let unlistedSeen = 0;
      for (const environment of UNLEASH_ENVIRONMENTS) {
        const unlisted = childrenOfDisabledParents(environment);
        for (const context of contexts) {
          const [reference, ours, proxied] = await Promise.all([
            frontend(unleash.url, unleashTokens.get(environment)!, context),
            frontend(stack.serverUrl, FRONTEND_TOKENS[environment], context),
            frontend(stack.proxyUrl, FRONTEND_TOKENS[environment], context),
          ]);
          mismatches.push(
            ...differences(environment, context, ours.toggles, reference.toggles, unlisted),
          );
          unlistedSeen += ours.toggles.filter((toggle) => unlisted.has(toggle.name)).length;
          // flags-proxy and flags-server: the same bytes and the same ETag.
          if (proxied.body !== ours.body || proxied.etag !== ours.etag) {
            mismatches.push(
              `${environment} flags-proxy ≠ flags-server for ${JSON.stringify(context)}: ` +
                `${proxied.etag} ${proxied.body} ≠ ${ours.etag} ${ours.body}`,
            );
          } else same++;
          toggles += reference.toggles.length;
          variants += reference.toggles.filter((toggle) => toggle.variant.enabled).length;
        }
      }
      t.diagnostic(
        `compared ${contexts.length} contexts × ${UNLEASH_ENVIRONMENTS.length} environments ` +
          `(${FLAGS} flags each): ${toggles} toggles from unleash-server (${variants} with a variant), ` +
          `each against flags-server; ${same} answers of flags-proxy equal to flags-server's, ETag included; ` +
          `${unlistedSeen} toggles enabled by a disabled parent left out (unleash-server never lists them)`,
      );
      assert.deepEqual(mismatches.slice(0, 20), [], `${mismatches.length} differences`);
      // A run that compares next to nothing would prove little.
      assert.ok(toggles > contexts.length * UNLEASH_ENVIRONMENTS.length * 10, `${toggles} toggles`);
      assert.ok(variants > contexts.length, `${variants} variants`);
    });
  },
);
