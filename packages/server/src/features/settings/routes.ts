import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { actorOf } from '../../auth/actor.js';
import type { Database } from '../../db/database.js';
import { recordEvent } from '../events/event-store.js';
import { EVENT_TYPES } from '../events/event-types.js';
import { readSetting, writeSetting } from './settings-store.js';

const NAME = 'personalAccessTokens';

const patSettingsSchema = {
  type: 'object',
  required: ['maxLifetimeDays'],
  additionalProperties: false,
  properties: {
    maxLifetimeDays: { type: ['integer', 'null'], minimum: 1, maximum: 36_500 },
  },
} as const;

/**
 * `GET`/`PUT /api/admin/settings/personal-access-tokens`: the longest a new personal access token
 * may live (`maxLifetimeDays`, null for no limit). Admin-only; a change is a `setting-updated`
 * event. Tokens made before a change keep their expiry.
 */
export function settingsRoutes(
  app: FastifyInstance,
  db: Database,
  guard: (request: FastifyRequest) => Promise<void>,
): void {
  const typed = app.withTypeProvider<JsonSchemaToTsProvider>();
  const path = '/api/admin/settings/personal-access-tokens';

  typed.get(
    path,
    {
      onRequest: guard,
      config: { permission: 'admin' },
      schema: { response: { 200: patSettingsSchema } },
    },
    async function adminGetPatSettings() {
      return readSetting(db, NAME);
    },
  );

  typed.put(
    path,
    {
      onRequest: guard,
      schema: { body: patSettingsSchema, response: { 200: patSettingsSchema } },
    },
    async function adminSetPatSettings(request) {
      const value = { maxLifetimeDays: request.body.maxLifetimeDays };
      const by = actorOf(request);
      await db.transaction(async (tx) => {
        const before = await writeSetting(tx, NAME, value);
        recordEvent(tx, {
          type: EVENT_TYPES.settingUpdated,
          by,
          preData: { name: NAME, value: before },
          data: { name: NAME, value },
        });
      });
      return value;
    },
  );
}
