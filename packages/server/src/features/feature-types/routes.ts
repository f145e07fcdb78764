import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { actorOf } from '../../auth/actor.js';
import type { Database } from '../../db/database.js';
import { ApiError } from '../../errors.js';
import type { RevisionTracker } from '../../revision.js';
import { writeConfig } from '../config-write.js';
import { recordEvent } from '../events/event-store.js';
import { EVENT_TYPES } from '../events/event-types.js';

interface FeatureType {
  id: string;
  name: string;
  description: string | null;
  lifetimeDays: number | null;
}

/** unleash-server's order of its types; others follow by id. */
const BUILT_IN_ORDER = [
  'release',
  'experiment',
  'operational',
  'kill-switch',
  'permission',
  'sunset',
];

const COLUMNS = `id, name, description, lifetime_days AS "lifetimeDays"`;

/**
 * Feature types: listed, and their expected lifetime changed (`0` or `null`: permanent). Types
 * are not served to SDKs, so a change diffs no flag.
 */
export function featureTypeRoutes(
  app: FastifyInstance,
  db: Database,
  revisions: RevisionTracker,
  guard: (request: FastifyRequest) => Promise<void>,
): void {
  const typed = app.withTypeProvider<JsonSchemaToTsProvider>();

  typed.get('/api/admin/feature-types', { onRequest: guard }, async function adminFeatureTypes() {
    const types = await db.query<FeatureType>(
      `SELECT ${COLUMNS} FROM feature_types ORDER BY array_position($1::text[], id), id`,
      [BUILT_IN_ORDER],
    );
    return { version: 1, types };
  });

  typed.put(
    '/api/admin/feature-types/:id/lifetime',
    {
      schema: {
        params: { type: 'object', required: ['id'], properties: { id: { type: 'string' } } },
        body: {
          type: 'object',
          required: ['lifetimeDays'],
          properties: {
            lifetimeDays: { type: ['integer', 'null'], minimum: 0, maximum: 2_147_483_647 },
          },
        },
      },
      onRequest: guard,
    },
    async function adminSetFeatureTypeLifetime(request) {
      const { id } = request.params;
      const lifetimeDays = request.body.lifetimeDays === 0 ? null : request.body.lifetimeDays;
      const actor = actorOf(request);
      return writeConfig(db, revisions, async (tx, scope) => {
        scope.flags();
        const [before] = await tx.query<FeatureType>(
          `SELECT ${COLUMNS} FROM feature_types WHERE id = $1 FOR UPDATE`,
          [id],
        );
        if (!before) {
          throw new ApiError(
            'NOT_FOUND',
            `The feature type you tried to update ("${id}") does not exist.`,
          );
        }
        const after = { ...before, lifetimeDays };
        await tx.query('UPDATE feature_types SET lifetime_days = $2 WHERE id = $1', [
          id,
          lifetimeDays,
        ]);
        await recordEvent(tx, {
          type: EVENT_TYPES.featureTypeUpdated,
          by: actor,
          data: after,
          preData: before,
        });
        return after;
      });
    },
  );
}
