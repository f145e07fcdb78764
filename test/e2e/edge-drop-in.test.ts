import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { buildApp, type Database, loadConfig, openDatabase } from '@flags/server';
import type { FastifyInstance } from 'fastify';
import { InMemStorageProvider, Unleash } from 'unleash-client';
import { InMemoryStorageProvider, UnleashClient } from 'unleash-proxy-client';
import { adminRequest } from '../../scripts/demo/seed.js';
import {
  enabledIn,
  type FrontendToggle,
  frontendQuery,
  type GeneratedContext,
  generateContexts,
  generateFlagSet,
} from '../helpers/differential.js';
import {
  freePort,
  type SpawnedEntry,
  spawnCommand,
  waitUntilHealthy,
} from '../helpers/processes.js';
import {
  UNLEASH_ENVIRONMENTS as ENVIRONMENTS,
  startUnleashServer,
  UNLEASH_VERSION,
  type UnleashEnvironment,
  unleashServerSkip,
} from '../helpers/unleash-server.js';
import { waitFor } from '../helpers/wait.js';

/**
 * flags-proxy as a drop-in for Unleash Edge: the `flags-proxy` command, configured only with
 * Edge's variable names, in front of the real unleash-server and in front of flags-server, each
 * holding the same generated flags in both of its environments. Real SDK packages on both sides.
 */

const SEED = 1414;
const flagSet = generateFlagSet(SEED, 60);
const contexts = generateContexts(SEED, 200);
/**
 * The entry point the `flags-proxy` command runs, from source so that the code in the tree is what
 * is tested (the launcher itself is tested in packages/proxy/test/command.test.ts).
 */
const PROXY_MAIN = fileURLToPath(new URL('../../packages/proxy/src/main.ts', import.meta.url));

type Method = 'GET' | 'POST';
type PerEnvironment<T> = Record<UnleashEnvironment, T>;
type Usage = PerEnvironment<{ yes: number; no: number }>;

/** An upstream holding `flagSet`, with a client and a frontend token per environment. */
interface Upstream {
  readonly name: string;
  /** The server's root URL (Edge's `UPSTREAM_URL`). */
  readonly root: string;
  readonly clientTokens: PerEnvironment<string>;
  readonly frontendTokens: PerEnvironment<string>;
  /** The upstream's own `/api/frontend` answer; `undefined` when it has no frontend API. */
  ownFrontend(
    environment: UnleashEnvironment,
    context: GeneratedContext,
    method: Method,
  ): Promise<FrontendToggle[] | undefined>;
  /** The usage the upstream has recorded for `feature` in the last hours, per environment. */
  usage(feature: string): Promise<Usage>;
  /** The app names the upstream knows from registrations. */
  applications(): Promise<string[]>;
  /** Creates and deletes frontend tokens (where a deletion shows in `/edge/validate`). */
  readonly tokens?: {
    createFrontend(environment: UnleashEnvironment): Promise<string>;
    remove(token: string): Promise<void>;
  };
  stop(): Promise<void>;
}

/**
 * `GET /api/frontend?<context>`, or `POST /api/frontend` with the context wrapped (`{ context }`, as
 * the SDK sends it) or bare (as Edge also takes it).
 */
async function frontendAnswer(
  base: string,
  token: string,
  context: GeneratedContext,
  method: Method,
  body: 'wrapped' | 'bare' = 'wrapped',
): Promise<{ status: number; toggles: FrontendToggle[] | undefined }> {
  const response =
    method === 'GET'
      ? await fetch(`${base}/api/frontend?${frontendQuery(context)}`, {
          headers: { authorization: token },
        })
      : await fetch(`${base}/api/frontend`, {
          method: 'POST',
          headers: { authorization: token, 'content-type': 'application/json' },
          body: JSON.stringify(body === 'wrapped' ? { context } : context),
        });
  const text = await response.text();
  return {
    status: response.status,
    toggles:
      response.status === 200
        ? (JSON.parse(text) as { toggles: FrontendToggle[] }).toggles
        : undefined,
  };
}

function usageOf(rows: readonly { environment: string; yes: number; no: number }[]): Usage {
  const usage: Usage = { development: { yes: 0, no: 0 }, production: { yes: 0, no: 0 } };
  for (const row of rows) {
    const counts = usage[row.environment as UnleashEnvironment];
    if (counts === undefined) continue;
    counts.yes += Number(row.yes);
    counts.no += Number(row.no);
  }
  return usage;
}

async function forEachEnvironment<T>(
  make: (environment: UnleashEnvironment) => Promise<T>,
): Promise<PerEnvironment<T>> {
  const made = {} as PerEnvironment<T>;
  for (const environment of ENVIRONMENTS) made[environment] = await make(environment);
  return made;
}

/** The real unleash-server (harness), the flags imported with its own batch import. */
async function unleashServerUpstream(): Promise<Upstream> {
  const unleash = await startUnleashServer();
  try {
    for (const segment of flagSet.segments) await unleash.createSegment(segment);
    for (const environment of ENVIRONMENTS)
      await unleash.importFlags(flagSet.documents[environment], environment);
    const clientTokens = await forEachEnvironment((environment) =>
      unleash.createToken({ type: 'client', environment }),
    );
    const frontendTokens = await forEachEnvironment((environment) =>
      unleash.createToken({ type: 'frontend', environment }),
    );
    return {
      name: `unleash-server ${UNLEASH_VERSION}`,
      root: unleash.url,
      clientTokens,
      frontendTokens,
      async ownFrontend(environment, context, method) {
        const answer = await frontendAnswer(
          unleash.url,
          frontendTokens[environment],
          context,
          method,
        );
        assert.equal(answer.status, 200, `unleash-server's own ${method} /api/frontend`);
        return answer.toggles;
      },
      async usage(feature) {
        // The hourly buckets of the last two hours (`lastHourUsage` drops the previous hour's
        // bucket as a new hour starts, which would make counts shrink mid-test).
        const { data } = (await adminRequest(
          unleash.url,
          unleash.adminToken,
          'GET',
          `/api/admin/client-metrics/features/${encodeURIComponent(feature)}/raw?hoursBack=2`,
        )) as { data: { environment: string; yes: number; no: number }[] };
        return usageOf(data);
      },
      async applications() {
        const { applications } = (await adminRequest(
          unleash.url,
          unleash.adminToken,
          'GET',
          '/api/admin/metrics/applications',
        )) as { applications: { appName: string }[] };
        return applications.map((application) => application.appName);
      },
      stop: () => unleash.stop(),
    };
  } catch (error) {
    await unleash.stop();
    throw error;
  }
}

const FLAGS_SERVER_ADMIN = `*:*.${randomBytes(16).toString('hex')}`;

/** flags-server in this process on PGlite, the flags imported through its admin API. */
async function flagsServerUpstream(): Promise<Upstream> {
  const config = loadConfig(
    {},
    { port: 0, host: '127.0.0.1', adminTokens: [FLAGS_SERVER_ADMIN], logLevel: 'warn' },
  );
  const db: Database = await openDatabase({ databaseUrl: undefined, dataDir: undefined });
  let server: FastifyInstance | undefined;
  const stop = async () => {
    await server?.close();
    await db.close();
  };
  try {
    server = await buildApp(config, { db, logger: false });
    const root = await server.listen({ port: 0, host: '127.0.0.1' });
    const admin = (method: string, path: string, body?: unknown) =>
      adminRequest(root, FLAGS_SERVER_ADMIN, method, path, body);
    for (const segment of flagSet.segments) await admin('POST', '/api/admin/segments', segment);
    for (const environment of ENVIRONMENTS) {
      await admin('POST', '/api/admin/features-batch/import', {
        project: 'default',
        environment,
        data: flagSet.documents[environment],
      });
    }
    let tokenCount = 0;
    const createToken = async (type: 'client' | 'frontend', environment: UnleashEnvironment) => {
      const created = (await admin('POST', '/api/admin/api-tokens', {
        tokenName: `edge-drop-in-${type}-${++tokenCount}`,
        type,
        environment,
        projects: ['*'],
      })) as { secret: string; type: string };
      assert.equal(created.type, type, `flags-server creates ${type} tokens`);
      return created.secret;
    };
    const clientTokens = await forEachEnvironment((environment) =>
      createToken('client', environment),
    );
    const frontendTokens = await forEachEnvironment((environment) =>
      createToken('frontend', environment),
    );
    return {
      name: 'flags-server',
      root,
      clientTokens,
      frontendTokens,
      async ownFrontend(environment, context, method) {
        const answer = await frontendAnswer(root, frontendTokens[environment], context, method);
        if (answer.status === 404) return undefined; // no frontend API of its own (yet)
        assert.equal(answer.status, 200, `flags-server's own ${method} /api/frontend`);
        return answer.toggles;
      },
      async usage(feature) {
        return usageOf(
          await db.query<{ environment: string; yes: number; no: number }>(
            `SELECT environment, SUM(yes)::int AS yes, SUM(no)::int AS no FROM client_metrics
              WHERE feature_name = $1 GROUP BY environment`,
            [feature],
          ),
        );
      },
      async applications() {
        const { applications } = (await admin('GET', '/api/admin/metrics/applications')) as {
          applications: { appName: string }[];
        };
        return applications.map((application) => application.appName);
      },
      tokens: {
        createFrontend: (environment) => createToken('frontend', environment),
        remove: async (token) => {
          await admin('DELETE', `/api/admin/api-tokens/${encodeURIComponent(token)}`);
        },
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** How the proxy is given its settings: as Unleash's docs and chart write Edge's. */
type Style = 'command line' | 'environment';

/** `flags-proxy <args>` from source, with only `env` (and `PATH`) as its environment. */
function flagsProxy(args: readonly string[], env: Record<string, string>): SpawnedEntry {
  return spawnCommand(
    process.execPath,
    ['--conditions=source', '--import', 'tsx', PROXY_MAIN, ...args],
    env,
  );
}

/**
 * The `flags-proxy` command as Unleash Edge's image runs it, `edge` with Edge's settings only: on
 * the command line (`-p <port> edge -u <url> -t A -t B …`, the server's options before the
 * subcommand) or in Edge's variables. Resolves once both environments serve.
 */
async function startEdgeStyleProxy(
  upstream: Upstream,
  style: Style,
): Promise<{ url: string; process: SpawnedEntry }> {
  const port = await freePort();
  const [development, production] = ENVIRONMENTS.map(
    (environment) => upstream.clientTokens[environment],
  ) as [string, string];
  // An upstream without streaming is said at info level (no fault: polling is how it syncs).
  const proxy =
    style === 'command line'
      ? flagsProxy(
          [
            '-p',
            String(port),
            'edge',
            '-u',
            upstream.root,
            '-t',
            development,
            '-t',
            production,
            '-f',
            '1',
            '-m',
            '1',
            '--token-revalidation-interval-seconds',
            '1',
          ],
          { LOG_LEVEL: 'info' },
        )
      : flagsProxy(['edge'], {
          UPSTREAM_URL: upstream.root,
          TOKENS: `${development},${production}`,
          PORT: String(port),
          FEATURES_REFRESH_INTERVAL_SECONDS: '1',
          METRICS_INTERVAL_SECONDS: '1',
          TOKEN_REVALIDATION_INTERVAL_SECONDS: '1',
          LOG_LEVEL: 'info',
        });
  const url = `http://127.0.0.1:${port}`;
  try {
    for (const environment of ENVIRONMENTS) {
      await waitUntilHealthy(`${url}/api/frontend`, proxy.child, {
        headers: { authorization: upstream.frontendTokens[environment] },
        output: proxy.output,
      });
    }
  } catch (error) {
    proxy.child.kill('SIGKILL');
    throw error;
  }
  return { url, process: proxy };
}

/** Toggles in name order (code units, as Edge sorts). */
function byName(toggles: readonly FrontendToggle[]): FrontendToggle[] {
  return [...toggles].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The fields a frontend SDK reads, in the order answered. */
function comparable(toggles: readonly FrontendToggle[]) {
  return toggles.map(({ name, enabled, variant, impressionData }) => ({
    name,
    enabled,
    variant: {
      name: variant.name,
      enabled: variant.enabled,
      ...(variant.payload === undefined ? {} : { payload: variant.payload }),
    },
    impressionData,
  }));
}

/** Every key path of a toggle list (`variant.payload.type`), to name fields one side lacks. */
function keyPaths(value: unknown, prefix = ''): string[] {
  if (Array.isArray(value)) return value.flatMap((item) => keyPaths(item, prefix));
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, inner]) => [
    `${prefix}${key}`,
    ...keyPaths(inner, `${prefix}${key}.`),
  ]);
}

/** The evaluation an `unleash-client` gives for a flag, as comparable data. */
function sdkEvaluation(client: Unleash, name: string, generated: GeneratedContext) {
  const context = { ...generated };
  const { name: variant, enabled, payload } = client.getVariant(name, context);
  return {
    name,
    enabled: client.isEnabled(name, context),
    variant,
    variantEnabled: enabled,
    payload,
  };
}

/**
 * The answers unleash-server's own frontend API gave, by environment, method and context: the
 * reference for an upstream that has no frontend API of its own.
 */
const unleashServerAnswers = new Map<string, FrontendToggle[]>();
const answerKey = (environment: UnleashEnvironment, method: Method, index: number) =>
  `${environment} ${method} ${index}`;

interface SuiteOptions {
  readonly title: string;
  readonly style: Style;
  readonly skip: string | false;
  readonly startUpstream: () => Promise<Upstream>;
  /** Keeps the upstream's own frontend answers here (the reference of later suites). */
  readonly recordAnswers?: Map<string, FrontendToggle[]>;
  /** Whether a token deleted upstream drops out of the upstream's `/edge/validate` answer. */
  readonly revocation: boolean;
  /** The upstream has no working `/api/client/streaming` (open-source unleash-server). */
  readonly noStreaming?: true;
}

function dropInSuite({
  title,
  style,
  skip,
  startUpstream,
  recordAnswers,
  revocation,
  noStreaming,
}: SuiteOptions) {
  describe(title, { skip }, () => {
    let upstream: Upstream;
    let proxyUrl: string;
    let proxy: SpawnedEntry;

    before(async () => {
      upstream = await startUpstream();
      try {
        ({ url: proxyUrl, process: proxy } = await startEdgeStyleProxy(upstream, style));
      } catch (error) {
        await upstream.stop();
        throw error;
      }
    });

    after(async () => {
      if (proxy && proxy.child.exitCode === null) {
        proxy.child.kill('SIGTERM');
        await proxy.exited;
      }
      await upstream?.stop();
    });

    /** `promise`, its failure told with the last lines the proxy logged. */
    async function withProxyLog<T>(promise: Promise<T>): Promise<T> {
      try {
        return await promise;
      } catch (error) {
        const log = proxy.output().trimEnd().split('\n').slice(-20).join('\n') || '(nothing)';
        throw new Error(`${(error as Error).message}\nflags-proxy logged last:\n${log}`);
      }
    }

    /** What the upstream answers for context `index`: its own frontend API, else unleash-server's. */
    async function expected(environment: UnleashEnvironment, index: number, method: Method) {
      const own = await upstream.ownFrontend(environment, contexts[index]!, method);
      if (own) recordAnswers?.set(answerKey(environment, method, index), own);
      return own ?? unleashServerAnswers.get(answerKey(environment, method, index));
    }

    if (noStreaming)
      it('falls back to polling by itself, saying why once per environment', async (t) => {
        const fallbacks = proxy
          .output()
          .split('\n')
          .filter((line) => line.includes('upstream does not stream ('));
        assert.equal(fallbacks.length, ENVIRONMENTS.length, proxy.output());
        for (const line of fallbacks) assert.match(line, /the upstream answered (404|405|501)/);
        t.diagnostic(fallbacks[0] ?? '');
      });

    if (style === 'command line')
      describe('with Unleash Edge’s defaults, checked one by one (`flags-proxy edge -a <name> -u <url> -t <token>`)', () => {
        /** Edge's port: the only proxy of the suites not given one. */
        const EDGE_PORT = 3063;
        const APP_NAME = `edge-defaults-${randomBytes(3).toString('hex')}`;
        let edge: SpawnedEntry;
        const base = `http://127.0.0.1:${EDGE_PORT}`;
        const frontend = (environment: UnleashEnvironment) => ({
          authorization: upstream.frontendTokens[environment],
        });

        before(async () => {
          // One environment's token: the other is outside what the startup tokens cover.
          edge = flagsProxy(
            ['edge', '-a', APP_NAME, '-u', upstream.root, '-t', upstream.clientTokens.development],
            { LOG_LEVEL: 'info' },
          );
          await waitUntilHealthy(`${base}/internal-backstage/ready`, edge.child, {
            output: edge.output,
          });
        });

        after(async () => {
          if (edge && edge.child.exitCode === null) {
            edge.child.kill('SIGTERM');
            await edge.exited;
          }
        });

        it('listens on port 3063 of every interface, IPv6 and IPv4 (`::`)', async () => {
          for (const host of ['127.0.0.1', '[::1]']) {
            const response = await fetch(`http://${host}:${EDGE_PORT}/internal-backstage/health`);
            assert.equal(response.status, 200, host);
          }
          assert.match(edge.output(), /listening on http:\/\/\[::\]:3063/);
        });

        it('serves only what the startup tokens cover: a valid token of another environment gets 403', async () => {
          const inside = await fetch(`${base}/api/frontend`, { headers: frontend('development') });
          assert.equal(inside.status, 200);
          const outside = await fetch(`${base}/api/frontend`, { headers: frontend('production') });
          assert.equal(outside.status, 403, await outside.text());
        });

        it('serves /api/frontend/all, and a flag that is off at /api/frontend/features/:name as 200 `enabled: false`', async () => {
          const query = frontendQuery(contexts[0]!);
          const all = await fetch(`${base}/api/frontend/all?${query}`, {
            headers: frontend('development'),
          });
          assert.equal(all.status, 200);
          const { toggles } = (await all.json()) as { toggles: FrontendToggle[] };
          const off = toggles.find((toggle) => !toggle.enabled);
          assert.ok(off, 'a flag off for the context');
          assert.equal(toggles.length, flagSet.documents.development.features.length);
          const one = await fetch(
            `${base}/api/frontend/features/${encodeURIComponent(off.name)}?${query}`,
            { headers: frontend('development') },
          );
          assert.equal(one.status, 200);
          assert.deepEqual(comparable([(await one.json()) as FrontendToggle]), comparable([off]));
          const unknown = await fetch(`${base}/api/frontend/features/no-such-flag?${query}`, {
            headers: frontend('development'),
          });
          assert.equal(unknown.status, 404);
        });

        it('compresses answers', async () => {
          const response = await fetch(`${base}/api/frontend/all`, {
            headers: { ...frontend('development'), 'accept-encoding': 'gzip' },
          });
          assert.equal(response.status, 200);
          assert.equal(response.headers.get('content-encoding'), 'gzip');
          assert.ok(((await response.json()) as { toggles: unknown[] }).toggles.length > 0);
        });

        it('syncs every 15 s, sends usage every 60 s and checks tokens every 3600 s', () => {
          assert.match(
            edge.output(),
            /Unleash Edge's defaults: syncing every 15 s, usage sent every 60 s, tokens checked again every 3600 s/,
          );
        });

        it('serves its OpenAPI description', async () => {
          const response = await fetch(`${base}/docs/openapi.json`);
          assert.equal(response.status, 200);
          assert.match(((await response.json()) as { openapi: string }).openapi, /^3\./);
        });

        it('registers upstream under its APP_NAME (`-a`)', async () => {
          await waitFor(
            async () => (await upstream.applications()).includes(APP_NAME),
            20_000,
            `${APP_NAME} among the upstream's applications`,
          );
        });
      });

    it('reaches /internal-backstage/ready 200 once both environments serve', async () => {
      const response = await fetch(`${proxyUrl}/internal-backstage/ready`);
      const text = await response.text();
      assert.equal(response.status, 200, text);
      assert.deepEqual(JSON.parse(text), { status: 'READY' });
    });

    it('answers GET and POST /api/frontend as the upstream does, for 200 contexts per environment', async (t) => {
      const reference = await upstream.ownFrontend('development', contexts[0]!, 'GET');
      if (reference === undefined && unleashServerAnswers.size === 0) {
        t.skip(
          `${upstream.name} has no /api/frontend of its own and unleash-server's answers are not at hand (it needs TEST_DATABASE_URL)`,
        );
        return;
      }
      const source =
        reference === undefined
          ? `unleash-server's answers for the same flags (${upstream.name} has no /api/frontend)`
          : `${upstream.name}'s own /api/frontend`;
      const onlyOurs = new Set<string>();
      const onlyTheirs = new Set<string>();
      const seen = { toggles: 0, variants: 0, payloads: 0, impressions: 0, otherOrder: 0 };
      const namesSeen: PerEnvironment<Set<string>> = {
        development: new Set(),
        production: new Set(),
      };
      for (const environment of ENVIRONMENTS) {
        for (const [index, context] of contexts.entries()) {
          for (const method of ['GET', 'POST'] as const) {
            const theirs = await expected(environment, index, method);
            assert.ok(theirs, `a reference answer for ${environment} ${method} context ${index}`);
            // POST bodies alternate between the SDK's `{ context }` and Edge's bare context.
            const ours = await frontendAnswer(
              proxyUrl,
              upstream.frontendTokens[environment],
              context,
              method,
              index % 2 === 0 ? 'wrapped' : 'bare',
            );
            assert.equal(ours.status, 200, `${environment} ${method} context ${index}`);
            // Edge sorts by name; unleash-server 8.2 answers in an order of its own (not by name,
            // not by creation), so the reference is put in name order before comparing.
            const sorted = byName(theirs);
            if (sorted.some((toggle, i) => toggle !== theirs[i])) seen.otherOrder++;
            assert.deepEqual(
              comparable(ours.toggles!),
              comparable(sorted),
              `${environment} ${method} ${JSON.stringify(context)}`,
            );
            const ourPaths = new Set(keyPaths(ours.toggles));
            const theirPaths = new Set(keyPaths(theirs));
            for (const path of ourPaths) if (!theirPaths.has(path)) onlyOurs.add(path);
            for (const path of theirPaths) if (!ourPaths.has(path)) onlyTheirs.add(path);
            for (const toggle of theirs) {
              namesSeen[environment].add(toggle.name);
              seen.toggles++;
              if (toggle.variant.enabled) seen.variants++;
              if (toggle.variant.payload) seen.payloads++;
              if (toggle.impressionData) seen.impressions++;
            }
          }
        }
      }
      t.diagnostic(
        `compared with ${source}: ${contexts.length} contexts × ${ENVIRONMENTS.length} environments × GET/POST = ` +
          `${contexts.length * ENVIRONMENTS.length * 2} answers, ${seen.toggles} enabled toggles ` +
          `(${seen.variants} with a variant, ${seen.payloads} with a payload, ${seen.impressions} with impressionData); ` +
          `flags seen enabled: development ${namesSeen.development.size}, production ${namesSeen.production.size} of ${flagSet.documents.development.features.length}; ` +
          `${seen.otherOrder} reference answers were not in name order (compared sorted by name)`,
      );
      t.diagnostic(
        `fields only flags-proxy sends: ${[...onlyOurs].join(', ') || 'none'}; only the reference: ${[...onlyTheirs].join(', ') || 'none'}`,
      );
      assert.deepEqual([...onlyTheirs], [], 'flags-proxy sends every field the upstream sends');
      // Answers that exercise little would prove little.
      assert.ok(
        seen.variants > 0 && seen.payloads > 0 && seen.impressions > 0,
        JSON.stringify(seen),
      );
      assert.notDeepEqual([...namesSeen.development].sort(), [...namesSeen.production].sort());
    });

    it('serves unleash-proxy-client on <proxy>/api/frontend with a frontend token, and takes its metrics (202)', async (t) => {
      for (const environment of ENVIRONMENTS) {
        const index = contexts.findIndex((context) => context.appName !== undefined);
        const { appName, ...context } = contexts[index]!;
        // Without a reference (no frontend API upstream, no unleash-server at hand), the SDK is
        // held to the proxy's own answer, which the comparison above checks where it can.
        const reference = await expected(environment, index, 'GET');
        const want =
          reference ??
          (
            await frontendAnswer(
              proxyUrl,
              upstream.frontendTokens[environment],
              contexts[index]!,
              'GET',
            )
          ).toggles!;
        const metricsPosts: number[] = [];
        const recordingFetch: typeof fetch = async (input, init) => {
          const response = await fetch(input, init);
          if (String(input).endsWith('/api/frontend/client/metrics'))
            metricsPosts.push(response.status);
          return response;
        };
        const client = new UnleashClient({
          url: `${proxyUrl}/api/frontend`,
          clientKey: upstream.frontendTokens[environment],
          appName: appName!,
          context,
          refreshInterval: 0,
          metricsInterval: 60,
          // Else its first send is a timer that `stop()` does not clear, and the file never ends.
          metricsIntervalInitial: 0,
          storageProvider: new InMemoryStorageProvider(),
          fetch: recordingFetch,
        });
        try {
          await client.start();
          assert.deepEqual(
            comparable(client.getAllToggles()),
            comparable(byName(want)),
            environment,
          );
          const sorted = byName(want);
          const checks = [
            ...new Set([
              ...sorted.slice(0, 2),
              ...sorted.filter((toggle) => toggle.variant.payload).slice(0, 1),
              ...sorted.filter((toggle) => toggle.impressionData).slice(0, 1),
            ]),
          ];
          const disabled = flagSet.documents[environment].features.find(
            (feature) => !want.some((toggle) => toggle.name === feature.name),
          );
          assert.ok(disabled, 'a flag that is off for this context');
          const impressions: string[] = [];
          client.on('impression', (event: { featureName: string }) =>
            impressions.push(event.featureName),
          );
          for (const toggle of checks) {
            assert.equal(client.isEnabled(toggle.name), true, toggle.name);
            const variant = client.getVariant(toggle.name);
            assert.deepEqual(
              { name: variant.name, enabled: variant.enabled, payload: variant.payload },
              {
                name: toggle.variant.name,
                enabled: toggle.variant.enabled,
                payload: toggle.variant.payload,
              },
              toggle.name,
            );
          }
          // An impression event per call (isEnabled, getVariant) of a toggle with impressionData.
          assert.deepEqual(
            impressions,
            checks
              .filter((toggle) => toggle.impressionData)
              .flatMap((toggle) => [toggle.name, toggle.name]),
          );
          assert.equal(client.isEnabled(disabled.name), false, disabled.name);
          await client.sendMetrics();
          assert.deepEqual(metricsPosts, [202], `${environment}: the SDK's metrics post`);
          t.diagnostic(
            `${environment}: ${want.length} toggles for ${appName} as ${reference ? 'the upstream answers' : "flags-proxy's own /api/frontend answers (no reference at hand)"}; ` +
              `checked ${checks.map((toggle) => toggle.name).join(', ')}` +
              ` and ${disabled.name} (off); impression events: ${impressions.length}`,
          );
        } finally {
          client.stop();
        }
      }
    });

    it("serves unleash-client on <proxy>/api with production's client token: production's flags, evaluated as from the upstream", async (t) => {
      const sdk = (url: string) => {
        const client = new Unleash({
          url,
          appName: 'edge-drop-in-backend',
          customHeaders: { Authorization: upstream.clientTokens.production },
          refreshInterval: 60_000,
          disableMetrics: true,
          storageProvider: new InMemStorageProvider(),
          skipInstanceCountWarning: true,
        });
        client.on('error', () => {});
        return client;
      };
      const viaProxy = sdk(`${proxyUrl}/api/`);
      const direct = sdk(`${upstream.root}/api/`);
      try {
        await Promise.all([once(viaProxy, 'synchronized'), once(direct, 'synchronized')]);
        const enabledDefinitions = viaProxy
          .getFeatureToggleDefinitions()
          .filter((feature) => feature.enabled)
          .map((feature) => feature.name)
          .sort();
        assert.deepEqual(enabledDefinitions, [...enabledIn(flagSet, 'production')].sort());
        assert.notDeepEqual(enabledDefinitions, [...enabledIn(flagSet, 'development')].sort());
        const names = flagSet.documents.production.features.map((feature) => feature.name);
        let enabled = 0;
        for (const context of contexts.slice(0, 20)) {
          for (const name of names) {
            const ours = sdkEvaluation(viaProxy, name, context);
            assert.deepEqual(ours, sdkEvaluation(direct, name, context), JSON.stringify(context));
            if (ours.enabled) enabled++;
          }
        }
        assert.ok(enabled > 0);
        t.diagnostic(
          `20 contexts × ${names.length} flags: isEnabled and getVariant equal via flags-proxy and directly from ${upstream.name} (${enabled} enabled)`,
        );
      } finally {
        viaProxy.destroy();
        direct.destroy();
      }
    });

    it('refuses as Edge does: no token 401, a made-up token 403, a token of the other kind 403', async () => {
      const madeUp = `*:production.${randomBytes(16).toString('hex')}`;
      const cases = [
        ['/api/frontend', undefined, 401],
        ['/api/client/features', undefined, 401],
        ['/api/frontend', madeUp, 403],
        ['/api/client/features', madeUp, 403],
        ['/api/client/features', upstream.frontendTokens.production, 403],
        ['/api/frontend', upstream.clientTokens.production, 403],
      ] as const;
      const answered = [];
      for (const [path, token] of cases) {
        const response = await fetch(`${proxyUrl}${path}`, {
          headers: token === undefined ? {} : { authorization: token },
        });
        await response.arrayBuffer();
        answered.push(response.status);
      }
      assert.deepEqual(
        answered,
        cases.map(([, , status]) => status),
      );
    });

    it("counts evaluations in the upstream's metrics under the environment they were made in", async (t) => {
      // A flag on in development and off in production: production never says yes to it, so a
      // yes counted for production would be a development evaluation reported in the wrong place.
      const developmentOnly = new Set(
        [...enabledIn(flagSet, 'development')].filter(
          (name) => !enabledIn(flagSet, 'production').has(name),
        ),
      );
      let found: { context: GeneratedContext; flag: string } | undefined;
      for (const context of contexts) {
        const { toggles } = await frontendAnswer(
          proxyUrl,
          upstream.frontendTokens.development,
          context,
          'GET',
        );
        const flag = toggles?.find((toggle) => developmentOnly.has(toggle.name))?.name;
        if (flag) {
          found = { context, flag };
          break;
        }
      }
      assert.ok(found, 'a context for which a development-only flag is on');
      const { context, flag } = found;
      const before = await upstream.usage(flag);
      assert.equal(before.production.yes, 0, 'production never said yes');
      const evaluations = { development: 7, production: 13 };
      for (const environment of ENVIRONMENTS) {
        for (let i = 0; i < evaluations[environment]; i++) {
          const { status, toggles } = await frontendAnswer(
            proxyUrl,
            upstream.frontendTokens[environment],
            context,
            'GET',
          );
          assert.equal(status, 200);
          assert.equal(
            toggles!.some((toggle) => toggle.name === flag),
            environment === 'development',
          );
        }
      }
      let now = before;
      await withProxyLog(
        waitFor(
          async () => {
            now = await upstream.usage(flag);
            assert.equal(
              now.production.yes,
              0,
              `no yes for ${flag} in production: ${JSON.stringify(now)}`,
            );
            return (
              now.development.yes >= before.development.yes + evaluations.development &&
              now.production.no >= before.production.no + evaluations.production
            );
          },
          20_000,
          `${flag}: ${evaluations.development} more yes in development and ${evaluations.production} more no in production (${JSON.stringify(before)} before)`,
        ),
      );
      t.diagnostic(
        `${flag} in ${upstream.name}'s metrics: ${JSON.stringify(before)} → ${JSON.stringify(now)}`,
      );
    });

    if (revocation) {
      it('stops taking a frontend token deleted upstream within the revalidation interval', async (t) => {
        const tokens = upstream.tokens;
        assert.ok(tokens, `${upstream.name} creates and deletes frontend tokens`);
        const token = await tokens.createFrontend('development');
        const status = async () => {
          const response = await fetch(`${proxyUrl}/api/frontend`, {
            headers: { authorization: token },
          });
          await response.arrayBuffer();
          return response.status;
        };
        assert.equal(await status(), 200);
        await tokens.remove(token);
        const deleted = Date.now();
        // TOKEN_REVALIDATION_INTERVAL_SECONDS=1; the bound leaves room for a loaded machine.
        await waitFor(async () => (await status()) === 403, 10_000, 'the deleted token to get 403');
        t.diagnostic(
          `refused ${Date.now() - deleted} ms after the deletion (revalidation every 1000 ms)`,
        );
      });
    }
  });
}

dropInSuite({
  title: `flags-proxy as Unleash Edge in front of unleash-server ${UNLEASH_VERSION}, by Edge's command line`,
  style: 'command line',
  skip: unleashServerSkip,
  startUpstream: unleashServerUpstream,
  recordAnswers: unleashServerAnswers,
  // unleash-server's /edge/validate keeps confirming a deleted token until it restarts.
  revocation: false,
  noStreaming: true,
});

dropInSuite({
  title: "flags-proxy as Unleash Edge in front of flags-server, by Edge's variables",
  style: 'environment',
  skip: false,
  startUpstream: flagsServerUpstream,
  revocation: true,
});
