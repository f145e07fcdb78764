import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  enabledIn as enabledInFlagSet,
  type FrontendToggle,
  frontendQuery,
  type GeneratedContext,
  generateContexts,
  generateFlagSet,
} from '../helpers/differential.js';
import {
  startUnleashServer,
  UNLEASH_ENVIRONMENTS,
  UNLEASH_VERSION,
  type UnleashEnvironment,
  type UnleashServer,
  unleashServerSkip,
} from '../helpers/unleash-server.js';

const SEED = 2026;
const flagSet = generateFlagSet(SEED, 80);
const contexts = generateContexts(SEED, 40);

const enabledIn = (environment: UnleashEnvironment) => enabledInFlagSet(flagSet, environment);

/** The harness itself: the real unleash-server, fed the generated flags in both environments. */
describe(
  `unleash-server ${UNLEASH_VERSION} as a reference upstream`,
  {
    skip: unleashServerSkip,
  },
  () => {
    let unleash: UnleashServer;
    const frontendTokens = new Map<UnleashEnvironment, string>();
    const clientTokens = new Map<UnleashEnvironment, string>();
    let importMs = 0;

    before(async () => {
      unleash = await startUnleashServer();
      const started = Date.now();
      for (const segment of flagSet.segments) await unleash.createSegment(segment);
      for (const environment of UNLEASH_ENVIRONMENTS) {
        await unleash.importFlags(flagSet.documents[environment], environment);
        frontendTokens.set(
          environment,
          await unleash.createToken({ type: 'frontend', environment }),
        );
        clientTokens.set(environment, await unleash.createToken({ type: 'client', environment }));
      }
      importMs = Date.now() - started;
    });

    after(() => unleash?.stop());

    async function frontend(environment: UnleashEnvironment, context: GeneratedContext) {
      const response = await fetch(`${unleash.url}/api/frontend?${frontendQuery(context)}`, {
        headers: { authorization: frontendTokens.get(environment)! },
      });
      assert.equal(response.status, 200);
      return ((await response.json()) as { toggles: FrontendToggle[] }).toggles;
    }

    it('starts on a database of its own and imports both environments', (t) => {
      const { totalMs, templateMs } = unleash.timings;
      t.diagnostic(
        `start: ${totalMs} ms${templateMs === undefined ? '' : ` (building the template: ${templateMs} ms)`}; ` +
          `segments, imports and tokens: ${importMs} ms`,
      );
      assert.match(unleash.database, /^unleash_\d+_[0-9a-f]+$/);
      assert.match(unleash.adminToken, /^\*:\*\.[0-9a-f]+$/);
    });

    it('serves /api/frontend per environment: only enabled flags, the environments differing as the documents do', async () => {
      const seen = new Map<UnleashEnvironment, Set<string>>();
      let contextsAnsweredDifferently = 0;
      let variantsSeen = 0;
      for (const context of contexts) {
        const answers = new Map<UnleashEnvironment, FrontendToggle[]>();
        for (const environment of UNLEASH_ENVIRONMENTS) {
          const toggles = await frontend(environment, context);
          answers.set(environment, toggles);
          const names = seen.get(environment) ?? new Set();
          for (const toggle of toggles) names.add(toggle.name);
          seen.set(environment, names);
          variantsSeen += toggles.filter((toggle) => toggle.variant.enabled).length;
        }
        const [development, production] = UNLEASH_ENVIRONMENTS.map((environment) =>
          JSON.stringify(answers.get(environment)),
        );
        if (development !== production) contextsAnsweredDifferently++;
      }
      for (const environment of UNLEASH_ENVIRONMENTS) {
        const names = seen.get(environment)!;
        const enabled = enabledIn(environment);
        assert.deepEqual(
          [...names].filter((name) => !enabled.has(name)),
          [],
          `${environment} answers only flags enabled there`,
        );
        // A generated set that enables almost nothing would prove little.
        assert.ok(names.size > enabled.size / 3, `${environment}: ${names.size} flags seen`);
      }
      const developmentOnly = [...enabledIn('development')].filter(
        (name) => !enabledIn('production').has(name) && seen.get('development')!.has(name),
      );
      assert.ok(developmentOnly.length > 0, 'some flag is on in development only');
      assert.ok(
        contextsAnsweredDifferently > contexts.length / 2,
        `${contextsAnsweredDifferently}`,
      );
      assert.ok(variantsSeen > 0, 'some answer carries a variant');
    });

    it('answers a context the same every time (no answer depends on chance)', async () => {
      for (const context of contexts.slice(0, 10)) {
        for (const environment of UNLEASH_ENVIRONMENTS) {
          assert.deepEqual(
            await frontend(environment, context),
            await frontend(environment, context),
          );
        }
      }
    });

    it('lists every imported flag on /api/client/features, enabled per environment', async () => {
      const expectedNames = flagSet.documents.development.features.map((f) => f.name).sort();
      for (const environment of UNLEASH_ENVIRONMENTS) {
        const response = await fetch(`${unleash.url}/api/client/features`, {
          headers: { authorization: clientTokens.get(environment)! },
        });
        assert.equal(response.status, 200);
        const { features } = (await response.json()) as {
          features: { name: string; enabled: boolean }[];
        };
        assert.deepEqual(features.map((feature) => feature.name).sort(), expectedNames);
        const enabled = enabledIn(environment);
        assert.deepEqual(
          features.filter((feature) => feature.enabled !== enabled.has(feature.name)),
          [],
          `${environment}: enabled as imported`,
        );
      }
    });

    it('confirms its tokens on POST /edge/validate and leaves out a garbage one', async () => {
      const tokens = [...frontendTokens.values(), ...clientTokens.values()];
      const response = await fetch(`${unleash.url}/edge/validate`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ tokens: [...tokens, '*:development.garbage'] }),
      });
      assert.equal(response.status, 200);
      const body = (await response.json()) as {
        tokens: { token: string; type: string; environment: string; projects: string[] }[];
      };
      const described = (token: string) => {
        const environment = UNLEASH_ENVIRONMENTS.find((env) => token.startsWith(`*:${env}.`));
        const type = [...frontendTokens.values()].includes(token) ? 'frontend' : 'client';
        return { token, type, environment, projects: ['*'] };
      };
      assert.deepEqual(
        body.tokens
          .map(({ token, type, environment, projects }) => ({ token, type, environment, projects }))
          .sort((a, b) => a.token.localeCompare(b.token)),
        tokens.map(described).sort((a, b) => a.token.localeCompare(b.token)),
      );
    });
  },
);
