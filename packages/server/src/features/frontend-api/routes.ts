import {
  AnswerWriter,
  API_FLAVOUR,
  type AuthorizeHook,
  allRoutes,
  Enrichers,
  frontendRoutes,
  installCors,
  keyedAnswerHeaders,
} from '@flags/serving';
import type { FastifyInstance } from 'fastify';
import type { TokenGuard } from '../../auth/token-guard.js';
import type { ServerConfig } from '../../config/options.js';
import type { Database } from '../../db/database.js';
import { sdkReportRoutes } from '../metrics/routes.js';
import type { UsageBuffer } from '../metrics/usage-buffer.js';
import type { FrontendStates } from './frontend-states.js';

/** Where the frontend API lives; its CORS answers cover exactly the paths below it. */
export const FRONTEND_API_PREFIX = '/api/frontend';

/**
 * The `appName` of contexts that carry none: unleash-server's frontend API evaluates with an SDK
 * named so, whose name fills the gap.
 */
const DEFAULT_APP_NAME = 'frontend-api';

export interface FrontendApiOptions {
  readonly config: ServerConfig;
  readonly db: Database;
  /** Admits frontend tokens only (401 without a known token, 403 for another kind). */
  readonly guard: TokenGuard;
  readonly states: FrontendStates;
  /** This server's version (the `X-Unleash-Version` of registrations). */
  readonly version: string;
  /** Writes usage reports, or holds them while the database is unreachable. */
  readonly usage: UsageBuffer;
}

/**
 * The token check of the evaluation routes: the server's frontend guard, then `request.served`,
 * the snapshot of the token's environment narrowed to its projects. Errors (401, 403, storage)
 * go to the server's error handler.
 */
function frontendAccess(guard: TokenGuard, states: FrontendStates): AuthorizeHook {
  async function admit(request: Parameters<TokenGuard>[0]): Promise<void> {
    await guard(request);
    const { environment, projects } = request.apiToken;
    request.served = await states.served(environment ?? 'default', projects);
  }
  return function frontendAuthorize(request, _reply, done) {
    admit(request).then(() => done(), done);
  };
}

/**
 * The frontend API for browser and mobile SDKs (`unleash-proxy-client` and the like), answered by
 * flags-proxy's own evaluation routes in its `/api` flavour (toggles in name order, 304 to POST
 * too, bare contexts), so both services give the same answers and ETags for the same flags and
 * context: `GET`/`POST /api/frontend`, `/api/frontend/all` (`enableAllEndpoint`, else 501),
 * `/api/frontend/features/:name`, plus `POST /api/frontend/client/metrics` and
 * `/client/register` into the client API's buckets. CORS (the `cors.*` options) covers these
 * paths and no other.
 */
export async function frontendApiRoutes(
  app: FastifyInstance,
  options: FrontendApiOptions,
): Promise<void> {
  const { config, db, guard, states, version, usage } = options;
  await app.register(
    async function frontendApi(scope) {
      // Every request the evaluation routes see has one (set by `frontendAccess`).
      scope.decorateRequest('served', null as never);
      await installCors(scope, config.cors);
      const evaluation = {
        // Under the prefix: the routes are `/api/frontend`, `/api/frontend/all`, ….
        mount: '',
        authenticate: frontendAccess(guard, states),
        flavour: API_FLAVOUR,
        defaults: {
          appName: DEFAULT_APP_NAME,
          environment: undefined,
          ignoreCallerRemoteAddress: config.ignoreCallerRemoteAddress,
        },
        enrichers: new Enrichers([], scope.log),
        headers: keyedAnswerHeaders('authorization', config.cors).evaluation,
        writer: new AnswerWriter(),
      };
      await scope.register(frontendRoutes, evaluation);
      await scope.register(allRoutes, { ...evaluation, enabled: config.enableAllEndpoint });
      sdkReportRoutes(
        scope,
        db,
        guard,
        version,
        {
          register: '/client/register',
          metrics: '/client/metrics',
          perMinute: config.frontendReportsPerMinute,
          storesStrategies: false,
        },
        usage,
      );
    },
    { prefix: FRONTEND_API_PREFIX },
  );
}
