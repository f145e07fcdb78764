import { OPERATIONAL_TAG } from '@flags/serving';
import type { FastifyInstance } from 'fastify';
import type { TokenValidator } from '../auth/token-validator.js';
import { anonymizeToken } from '../auth/unleash-token.js';
import type { Environments } from '../sync/environments.js';

export interface BackstageRouteOptions {
  readonly environments: Environments;
  readonly validator: TokenValidator | undefined;
  /** Serves `/internal-backstage/tokens` (`enableTokensEndpoint`). */
  readonly tokens: boolean;
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

const timestamp = (description: string) =>
  ({ type: 'string', format: 'date-time', description: `${description} Absent: never.` }) as const;

const projects = {
  type: 'array',
  items: { type: 'string' },
  description: '`["*"]`: every project.',
} as const;

const tokensBody = {
  type: 'object',
  required: ['environments', 'validated', 'counts'],
  properties: {
    environments: {
      type: 'array',
      description: 'Every environment synced, with the client tokens it syncs with.',
      items: {
        type: 'object',
        required: ['name', 'startup', 'ready', 'tokens'],
        properties: {
          name: { type: 'string' },
          startup: {
            type: 'boolean',
            description: 'Named by a startup token (readiness waits for it).',
          },
          ready: { type: 'boolean', description: 'Holds a snapshot.' },
          flags: { type: 'integer', description: 'Flags in the snapshot, when it holds one.' },
          lastUpdate: timestamp('Last new payload (backup and bootstrap included).'),
          lastCheck: timestamp(
            'Last successful upstream check (a poll’s 200 or 304, a stream’s event or keep-alive).',
          ),
          tokens: {
            type: 'array',
            items: {
              type: 'object',
              required: ['token'],
              properties: {
                token: { type: 'string', description: 'Anonymised: the secret is masked.' },
                projects: { ...projects, description: 'Absent until validated (`[]` tokens).' },
                lastUpdate: timestamp('Last new payload this token fetched.'),
                lastCheck: timestamp('Last successful upstream check with this token.'),
                sync: {
                  type: 'string',
                  enum: ['streaming', 'polling'],
                  description:
                    'How this token syncs now: by the upstream’s event stream (or trying to), or by polling.',
                },
              },
            },
          },
        },
      },
    },
    validated: {
      type: 'array',
      description: 'Tokens the upstream confirmed (`/edge/validate`), or the backup remembered.',
      items: {
        type: 'object',
        required: ['token', 'type', 'environment', 'projects', 'checkedAt'],
        properties: {
          token: { type: 'string', description: 'Anonymised: the secret is masked.' },
          type: { type: 'string', enum: ['frontend', 'client'] },
          environment: { type: 'string' },
          projects,
          checkedAt: timestamp('The upstream answer this comes from.'),
        },
      },
    },
    counts: {
      type: 'object',
      description: 'Tokens by status: refused ones are counted, not listed.',
      required: ['valid', 'invalid', 'pending'],
      properties: {
        valid: { type: 'integer' },
        invalid: { type: 'integer', description: 'Remembered refusals.' },
        pending: { type: 'integer', description: 'Waiting for a validation call.' },
      },
    },
  },
} as const;

/** An epoch ms as ISO text; `undefined` for 0 (never). */
function isoOrNone(ms: number): string | undefined {
  return ms === 0 ? undefined : new Date(ms).toISOString();
}

/** The `/internal-backstage/tokens` answer: every secret anonymised, refused tokens only counted. */
function tokensReport(environments: Environments, validator: TokenValidator | undefined) {
  return {
    environments: environments.all().map((environment) => ({
      name: environment.name,
      startup: environment.startup,
      ready: environment.state.ready,
      flags: environment.state.current?.snapshot.names.length,
      lastUpdate: isoOrNone(environment.state.lastUpdateMs),
      lastCheck: isoOrNone(environment.lastCheckMs),
      tokens: environment.feedStatuses().map((feed) => ({
        token: anonymizeToken(feed.token),
        projects: feed.projects,
        lastUpdate: isoOrNone(feed.lastUpdateMs),
        lastCheck: isoOrNone(feed.lastCheckMs),
        sync: feed.sync,
      })),
    })),
    validated: (validator?.records() ?? []).flatMap(({ status, info, checkedAt }) =>
      status === 'valid' && info !== undefined
        ? [
            {
              token: anonymizeToken(info.token),
              type: info.type,
              environment: info.environment,
              projects: info.projects,
              checkedAt: new Date(checkedAt).toISOString(),
            },
          ]
        : [],
    ),
    counts: validator?.counts() ?? { valid: 0, invalid: 0, pending: 0 },
  };
}

/**
 * Unleash Edge's operations routes, answered before the first sync too (`beforeReady`) and without
 * a key: `GET /internal-backstage/health` (the process answers), `/ready` (every startup
 * environment holds a snapshot, from upstream, backup or bootstrap) and, unless turned off,
 * `/tokens` (what the proxy knows of tokens, secrets masked, as Edge lists them).
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
              'A startup environment has no snapshot yet (one whose token the upstream refuses does not count).',
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
  if (options.tokens) {
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
        return reply.code(200).send(tokensReport(environments, validator));
      },
    );
  }
  done();
}
