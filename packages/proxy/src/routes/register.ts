import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import { type ClientRegister, clientRegisterSchema } from '@flags/schemas';
import { errorResponses, SERVER_SIDE_TAG, textResponse } from '@flags/serving';
import type { FastifyInstance } from 'fastify';
import type { AuthorizeHook as Authenticate } from '../auth/access.js';
import type { ProxyConfig } from '../config/load.js';
import type { Logger } from '../config/options.js';
import type { UpstreamClient } from '../sync/http-client.js';
import { upstreamHeaders } from '../sync/upstream.js';

/** Registrations forwarded at once at most; more are answered but not forwarded. */
const MAX_FORWARDS_IN_FLIGHT = 16;

export interface RegisterRouteOptions {
  readonly config: ProxyConfig;
  /** `undefined`: registrations are answered but not forwarded. */
  readonly upstream: UpstreamClient | undefined;
  readonly log: Logger;
  /** `/proxy/client/register`, `/api/frontend/client/register`, `/api/client/register`, … */
  readonly path: string;
  /** 200 `OK` (`/proxy`, as Unleash Proxy) or 202 with no body (`/api`, as Edge). */
  readonly accepted: 200 | 202;
  readonly authenticate: Authenticate;
}

/**
 * `POST /proxy/client/register`: an SDK announcing itself. With a server-side token (a secret of
 * the operator's) the registration is forwarded to `POST {flagsUrl}/client/register` with the
 * SDK's own `appName` and `instanceId` (Unleash Proxy drops it), in the background: the SDK gets
 * its answer without waiting for the upstream. With a client key, which anyone can read from a
 * page, it is never forwarded (it would register any made-up instance upstream): its application
 * joins the proxy's own aggregated usage report instead, as Unleash Edge folds frontend data into
 * its reports.
 */
export function registerRoutes(
  app: FastifyInstance,
  options: RegisterRouteOptions,
  done: () => void,
): void {
  const { config, upstream, log, path, accepted, authenticate } = options;
  const url = new URL('client/register', config.flagsUrl);
  const headers = { ...upstreamHeaders(config), 'content-type': 'application/json' };
  let inFlight = 0;

  const forward = async (body: ClientRegister, via: UpstreamClient, token: string) => {
    inFlight++;
    try {
      const response = await via.request(url, {
        method: 'POST',
        // With a client token of the SDK's environment, so the upstream registers it there.
        headers: { ...headers, [config.upstreamAuthHeader]: token },
        body: JSON.stringify(
          config.environment === undefined ? body : { ...body, environment: config.environment },
        ),
        timeoutMs: config.upstreamTimeoutMs,
      });
      await response.dump();
      if (response.status >= 300) {
        log.warn(
          { status: response.status, appName: body.appName },
          'upstream refused a forwarded SDK registration',
        );
      }
    } catch (error) {
      log.warn(
        { err: error instanceof Error ? error.message : String(error), appName: body.appName },
        'forwarding an SDK registration failed',
      );
    } finally {
      inFlight--;
    }
  };

  app.withTypeProvider<JsonSchemaToTsProvider>().post(
    path,
    {
      schema: {
        summary:
          'Register an SDK instance: with a server-side token forwarded upstream under its own appName; with a client key only its appName is reported, in the proxy’s usage metrics.',
        tags: [SERVER_SIDE_TAG],
        body: clientRegisterSchema,
        response: {
          ...(accepted === 200 ? { 200: textResponse('OK') } : { 202: textResponse('Accepted') }),
          ...errorResponses(400, 401, 403, 429, 503),
        },
      },
      onRequest: authenticate,
    },
    function clientPostRegister(request, reply) {
      const body = request.body;
      const environment = request.access.environment;
      // Client keys and frontend tokens ship in every page: public, so never forwarded. Without
      // usage metrics their registrations go nowhere.
      if (request.access.type === 'frontend')
        environment.usage?.announce(body.appName, body.environment);
      else if (upstream === undefined)
        log.debug({}, 'no upstream client; registration not forwarded');
      else if (inFlight < MAX_FORWARDS_IN_FLIGHT)
        void forward(body, upstream, environment.tokens[0] as string);
      else log.debug({}, 'too many registrations in flight; not forwarding this one');
      if (accepted === 202) return reply.code(202).send();
      return reply.code(200).type('text/plain; charset=utf-8').send('OK');
    },
  );
  done();
}
