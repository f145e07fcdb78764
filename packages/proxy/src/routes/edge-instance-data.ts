import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import { edgeInstanceDataSchema } from '@flags/schemas';
import { errorResponses, SERVER_SIDE_TAG, textResponse } from '@flags/serving';
import type { FastifyInstance } from 'fastify';
import type { AuthorizeHook as Authenticate } from '../auth/access.js';
import { lazyValidatorCompiler } from '../http/lazy-validator.js';
import type { InstanceData } from '../usage/instance-data.js';

export interface EdgeInstanceDataRouteOptions {
  /** Client tokens only, as Edge's `AuthToken` extractor on its client API. */
  readonly authenticate: Authenticate;
  readonly instanceData: InstanceData;
}

/**
 * `POST /api/client/metrics/edge`: a downstream Unleash Edge's (or flags-proxy's) instance data
 * (`post_edge_instance_data` in Edge 20's `unleash-edge-client-api/src/metrics.rs`), passed on
 * upstream as one of this proxy's `connectedEdges` with its next instance-data send and listed at
 * `/internal-backstage/instancedata` until then. 202 whether kept or dropped at the bounds
 * (`InstanceData`), as usage beyond its bounds is; the sender cannot do better by resending.
 */
export function edgeInstanceDataRoutes(
  app: FastifyInstance,
  options: EdgeInstanceDataRouteOptions,
  done: () => void,
): void {
  app.withTypeProvider<JsonSchemaToTsProvider>().post(
    '/api/client/metrics/edge',
    {
      schema: {
        summary:
          'Send a downstream Edge’s or proxy’s instance data; it is passed upstream with this proxy’s own.',
        tags: [SERVER_SIDE_TAG],
        body: edgeInstanceDataSchema,
        response: {
          202: textResponse('Accepted'),
          ...errorResponses(400, 401, 403, 413, 415, 429, 503),
        },
      },
      onRequest: options.authenticate,
      validatorCompiler: lazyValidatorCompiler,
    },
    function clientPostEdgeInstanceData(request, reply) {
      const body = request.body;
      options.instanceData.receive(body, JSON.stringify(body).length);
      return reply.code(202).send();
    },
  );
  done();
}
