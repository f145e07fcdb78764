import {
  type BulkApplication,
  type BulkMetric,
  bulkApplicationSchema,
  bulkMetricSchema,
  edgeInstanceDataSchema,
} from '@flags/schemas';
import { OPERATIONAL_TAG } from '@flags/serving';
import type { FastifyInstance } from 'fastify';
import type { pretrustedListing } from '../auth/access.js';
import type { TokenValidator } from '../auth/token-validator.js';
import { edgeAnonymizedToken, type TokenType } from '../auth/unleash-token.js';
import type { Environments } from '../sync/environments.js';
import { bulkMetric, ownApplication, relayedRegistration, type Sender } from '../usage/batches.js';
import type { InstanceData } from '../usage/instance-data.js';

export interface BackstageRouteOptions {
  readonly environments: Environments;
  readonly validator: TokenValidator | undefined;
  /** `pretrustedTokens` as the tokens endpoint lists them (`Trusted` frontend tokens). */
  readonly pretrusted: ReturnType<typeof pretrustedListing>;
  /** `refreshInterval`, ms: when a polling feed polls next. */
  readonly refreshIntervalMs: number;
  /** How the proxy names itself in usage metrics (`MetricsReporter.sender`); none: metrics off. */
  readonly sender: Sender | undefined;
  readonly instanceData: InstanceData;
  /** Which of Edge's switchable routes are served (`enable*Endpoint`). */
  readonly serve: {
    readonly tokens: boolean;
    readonly features: boolean;
    readonly metricsBatch: boolean;
    readonly instanceData: boolean;
  };
}

const statusBody = (status: string) =>
  ({
    type: 'object',
    required: ['status'],
    properties: { status: { type: 'string', enum: [status] } },
  }) as const;

const notReadyBody = {
  type: 'object',
  required: ['status', 'error'],
  properties: {
    status: { type: 'string', enum: ['NOTREADY'] },
    error: { type: 'string', description: 'Names the startup environments without a snapshot.' },
  },
} as const;

// `/internal-backstage/tokens` in Unleash Edge 20's shape: `TokenInfo`, `TokenRefresh` and
// `EdgeToken` of `unleash-edge-types/src/lib.rs` and `tokens.rs` (its `TokenRefresh` fields are in
// snake case, the others in camel case, as Edge writes them).
const edgeTokenSchema = {
  type: 'object',
  required: ['token', 'type', 'environment', 'projects', 'status'],
  properties: {
    token: {
      type: 'string',
      description: 'Anonymised as Edge does: the secret cut to its ends, or to its selector.',
    },
    type: {
      type: ['string', 'null'],
      enum: ['frontend', 'backend', null],
      description: 'Edge says `backend` for client tokens.',
    },
    environment: { type: ['string', 'null'] },
    projects: { type: 'array', items: { type: 'string' }, description: '`["*"]`: every project.' },
    status: { type: 'string', enum: ['Validated', 'Trusted'] },
  },
} as const;

const instant = (description: string) =>
  ({
    type: ['string', 'null'],
    format: 'date-time',
    description: `${description} null: never.`,
  }) as const;

const tokensBody = {
  type: 'object',
  required: ['tokenRefreshes', 'tokenValidationStatus', 'invalidTokenCount'],
  properties: {
    tokenRefreshes: {
      type: 'array',
      description:
        'The client tokens the proxy syncs with, one per feed; a token the upstream refused (401/403) at its last poll is left out and counted in `invalidTokenCount`, as Edge drops it.',
      items: {
        type: 'object',
        required: [
          'token',
          'etag',
          'next_refresh',
          'last_refreshed',
          'last_feature_count',
          'last_check',
          'revision_id',
          'failure_count',
        ],
        properties: {
          token: edgeTokenSchema,
          etag: { type: ['string', 'null'], description: 'Not kept per feed: null.' },
          next_refresh: instant('Next poll (polling feeds).'),
          last_refreshed: instant('Last new payload this token fetched.'),
          last_feature_count: {
            type: ['integer', 'null'],
            description: 'Flags in its environment’s snapshot.',
          },
          last_check: instant(
            'Last successful upstream check (a poll’s 200 or 304, a stream’s event or keep-alive).',
          ),
          revision_id: {
            type: ['integer', 'null'],
            description: 'The upstream’s revision, when it sends one.',
          },
          failure_count: {
            type: 'integer',
            description:
              'Failed syncs in a row, as Edge counts them: one more per failure (at most 10), one less per success.',
          },
          sync: {
            type: 'string',
            enum: ['streaming', 'polling'],
            description: 'flags-proxy’s addition: how the feed syncs now.',
          },
        },
      },
    },
    tokenValidationStatus: {
      type: 'array',
      description:
        'Tokens the upstream confirmed (`/edge/validate`, or the backup remembered): `Validated`; `pretrustedTokens`: `Trusted`.',
      items: edgeTokenSchema,
    },
    invalidTokenCount: {
      type: 'integer',
      description:
        'Tokens refused (by `/edge/validate`, or a startup token the upstream answers 401/403), or waiting for a validation call: counted, not listed.',
    },
  },
} as const;

/** An epoch ms as ISO text; null for 0 (never). */
function isoOrNull(ms: number): string | null {
  return ms === 0 ? null : new Date(ms).toISOString();
}

/** Edge's word for a token type: client tokens are `backend`. */
function edgeType(type: TokenType): 'frontend' | 'backend' {
  return type === 'client' ? 'backend' : 'frontend';
}

/** The `/internal-backstage/tokens` answer: every secret anonymised as Edge does, refused tokens only counted. */
function tokensReport(
  environments: Environments,
  validator: TokenValidator | undefined,
  pretrusted: BackstageRouteOptions['pretrusted'],
  refreshIntervalMs: number,
) {
  const counts = validator?.counts() ?? { valid: 0, invalid: 0, pending: 0 };
  let refusedFeeds = 0;
  return {
    tokenRefreshes: environments.all().flatMap((environment) => {
      const payload = environment.state.current?.payload;
      const revision = payload?.meta?.revisionId;
      // Edge drops a token its upstream refuses from its refresh list (and counts it invalid);
      // flags-proxy keeps retrying it, and lists it again once the upstream accepts it.
      const feeds = environment.feedStatuses().filter((feed) => {
        if (feed.refused) refusedFeeds++;
        return !feed.refused;
      });
      return feeds.map((feed) => ({
        token: {
          token: edgeAnonymizedToken(feed.token),
          type: 'backend',
          environment: environment.name,
          projects: feed.projects ?? [],
          status: 'Validated',
        },
        etag: null,
        next_refresh:
          feed.sync === 'polling' && feed.lastCheckMs > 0
            ? new Date(feed.lastCheckMs + refreshIntervalMs).toISOString()
            : null,
        last_refreshed: isoOrNull(feed.lastUpdateMs),
        last_feature_count: payload?.features.length ?? null,
        last_check: isoOrNull(feed.lastCheckMs),
        revision_id: revision === undefined ? null : Math.trunc(revision),
        failure_count: feed.failureCount,
        sync: feed.sync,
      }));
    }),
    tokenValidationStatus: [
      ...(validator?.records() ?? []).flatMap(({ status, info }) =>
        status === 'valid' && info !== undefined
          ? [
              {
                token: edgeAnonymizedToken(info.token),
                type: edgeType(info.type),
                environment: info.environment,
                projects: info.projects,
                status: 'Validated',
              },
            ]
          : [],
      ),
      ...pretrusted.map((entry) => ({
        token: edgeAnonymizedToken(entry.token),
        type: 'frontend',
        environment: entry.environment ?? null,
        projects: entry.projects,
        status: 'Trusted',
      })),
    ],
    invalidTokenCount: counts.invalid + counts.pending + refusedFeeds,
  };
}

/** `/internal-backstage/features`: Edge's `HashMap<String, ClientFeatures>`, by environment. */
const featuresBody = {
  type: 'object',
  description:
    'Each environment’s synced client-features payload (`/api/client/features` for a `*` token), by environment name.',
  additionalProperties: { type: 'object', additionalProperties: true },
} as const;

/** The JSON of every environment's snapshot, by name (environments without one left out). */
function featuresJson(environments: Environments): string {
  const entries = environments
    .all()
    .flatMap((environment) =>
      environment.state.current === undefined
        ? []
        : [`${JSON.stringify(environment.name)}:${environment.state.current.clientFeaturesJson()}`],
    );
  return `{${entries.join(',')}}`;
}

// `/internal-backstage/metricsbatch` in Edge 20's shape: `MetricsInfo` and `ClientMetric` of
// `unleash-edge-types/src/lib.rs` (`MetricsKey` in snake case), `ClientApplication` and
// `ClientMetricsEnv` as Edge sends them in bulk (`bulkApplicationSchema`, `bulkMetricSchema`).
const metricsBatchBody = {
  type: 'object',
  required: ['applications', 'metrics'],
  properties: {
    applications: {
      type: 'array',
      description:
        'The applications pending usage belongs to: the proxy’s instance, and downstream registrations (`connectVia` names the proxy).',
      items: bulkApplicationSchema,
    },
    metrics: {
      type: 'array',
      description: 'Pending counts, one entry per application, environment and flag.',
      items: {
        type: 'object',
        required: ['key', 'bucket'],
        properties: {
          key: {
            type: 'object',
            required: ['app_name', 'feature_name', 'environment', 'timestamp'],
            properties: {
              app_name: { type: 'string' },
              feature_name: { type: 'string' },
              environment: { type: 'string' },
              timestamp: { type: 'string', format: 'date-time' },
            },
          },
          bucket: bulkMetricSchema,
        },
      },
    },
  },
} as const;

/** The usage every environment would send upstream next, left in place. */
function metricsBatch(environments: Environments, sender: Sender) {
  const applications: BulkApplication[] = [];
  const metrics: Array<{ key: Record<string, string>; bucket: BulkMetric }> = [];
  for (const environment of environments.all()) {
    for (const bucket of environment.usage?.pending() ?? []) {
      const name = bucket.environment ?? environment.name;
      const own = ownApplication(bucket, name, sender);
      if (own !== undefined) applications.push(own);
      for (const registration of bucket.registrations.values())
        applications.push(relayedRegistration(registration, name, sender));
      for (const [flag, toggle] of bucket.toggles) {
        // Stamped with the bucket's start, as Edge keys its pending counts: stable between listings.
        const counts = bulkMetric(bucket, flag, toggle, name, bucket.start);
        metrics.push({
          key: {
            app_name: counts.appName,
            feature_name: counts.featureName,
            environment: name,
            timestamp: counts.timestamp as string,
          },
          bucket: counts,
        });
      }
    }
  }
  return { applications, metrics };
}

/** `/internal-backstage/instancedata`: Edge 20's `DebugEdgeInstanceData` (snake-case keys). */
const instanceDataBody = {
  type: 'object',
  required: ['this_instance', 'connected_instances'],
  properties: {
    this_instance: {
      description: 'This proxy’s instance data, as it sends it upstream (`EdgeInstanceData`).',
      ...edgeInstanceDataSchema,
    },
    connected_instances: {
      type: 'array',
      description: 'Instance data downstream relays sent since the last upstream send.',
      items: edgeInstanceDataSchema,
    },
  },
} as const;

/**
 * Unleash Edge's operations routes, answered before the first sync too (`beforeReady`) and without
 * a key: `GET /internal-backstage/health` (the process answers), `/ready` (every startup
 * environment holds a snapshot, from upstream, backup or bootstrap) and, each unless turned off,
 * `/tokens` (what the proxy knows of tokens, secrets masked), `/features` (every environment's
 * flag configuration), `/metricsbatch` (usage waiting to be sent) and `/instancedata`, in the
 * shapes of Edge 20's `unleash-edge-backstage/src/lib.rs`.
 */
export function backstageRoutes(
  app: FastifyInstance,
  options: BackstageRouteOptions,
  done: () => void,
): void {
  const { environments, validator } = options;
  const config = { beforeReady: true };
  app.get(
    '/internal-backstage/health',
    {
      config,
      schema: {
        summary: 'Whether the process answers (also before the first sync).',
        tags: [OPERATIONAL_TAG],
        security: [],
        response: { 200: { description: '`{"status":"OK"}`', ...statusBody('OK') } },
      },
    },
    function operationalGetBackstageHealth(_request, reply) {
      return reply.code(200).send({ status: 'OK' });
    },
  );
  app.get(
    '/internal-backstage/ready',
    {
      config,
      schema: {
        summary: 'Whether every startup environment holds a snapshot (from upstream or backup).',
        tags: [OPERATIONAL_TAG],
        security: [],
        response: {
          200: { description: '`{"status":"READY"}`', ...statusBody('READY') },
          503: {
            description:
              'A startup environment has no snapshot yet (one whose token the upstream refuses does not count, unless none holds one).',
            ...notReadyBody,
          },
        },
      },
    },
    function operationalGetBackstageReady(_request, reply) {
      if (environments.ready) return reply.code(200).send({ status: 'READY' });
      const waiting = environments
        .all()
        .filter((environment) => environment.startup && !environment.state.ready)
        .map((environment) => `"${environment.name}"`);
      return reply.code(503).send({
        status: 'NOTREADY',
        error: `not synchronized yet: environment${waiting.length === 1 ? '' : 's'} ${waiting.join(', ')}`,
      });
    },
  );
  if (options.serve.tokens) {
    app.get(
      '/internal-backstage/tokens',
      {
        config,
        schema: {
          summary: 'The tokens this proxy syncs with and has validated, secrets masked.',
          tags: [OPERATIONAL_TAG],
          security: [],
          response: { 200: { description: 'Anonymised tokens and their state.', ...tokensBody } },
        },
      },
      function operationalGetBackstageTokens(_request, reply) {
        return reply
          .code(200)
          .send(
            tokensReport(environments, validator, options.pretrusted, options.refreshIntervalMs),
          );
      },
    );
  }
  if (options.serve.features) {
    app.get(
      '/internal-backstage/features',
      {
        config,
        schema: {
          summary:
            'Every synced environment’s flag configuration, without a key, as Unleash Edge lists it.',
          tags: [OPERATIONAL_TAG],
          security: [],
          response: { 200: featuresBody },
        },
      },
      function operationalGetBackstageFeatures(_request, reply) {
        return reply
          .code(200)
          .type('application/json; charset=utf-8')
          .send(featuresJson(environments));
      },
    );
  }
  if (options.serve.metricsBatch) {
    app.get(
      '/internal-backstage/metricsbatch',
      {
        config,
        schema: {
          summary:
            'The usage metrics waiting for the next upstream send, as Unleash Edge lists them.',
          tags: [OPERATIONAL_TAG],
          security: [],
          response: {
            200: { description: 'Pending applications and counts.', ...metricsBatchBody },
          },
        },
      },
      function operationalGetBackstageMetricsBatch(_request, reply) {
        const sender = options.sender;
        const batch =
          sender === undefined
            ? { applications: [], metrics: [] }
            : metricsBatch(environments, sender);
        return reply.code(200).send(batch);
      },
    );
  }
  if (options.serve.instanceData) {
    app.get(
      '/internal-backstage/instancedata',
      {
        config,
        schema: {
          summary:
            'This proxy’s instance data and what downstream relays sent it, as Unleash Edge lists them.',
          tags: [OPERATIONAL_TAG],
          security: [],
          response: { 200: { description: 'Instance data.', ...instanceDataBody } },
        },
      },
      function operationalGetBackstageInstanceData(_request, reply) {
        const data = options.instanceData;
        const body = {
          this_instance: data.observe(environments),
          connected_instances: data.connectedInstances(),
        };
        // Already in its shape: no serializer pass over a body of up to `MAX_CONNECTED_BYTES`.
        return reply.code(200).type('application/json; charset=utf-8').send(JSON.stringify(body));
      },
    );
  }
  done();
}
