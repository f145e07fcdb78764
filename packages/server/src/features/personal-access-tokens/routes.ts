import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { actorOf } from '../../auth/actor.js';
import type { Database } from '../../db/database.js';
import { ApiError } from '../../errors.js';
import { refuseDuplicate } from '../config-write.js';
import { recordEvent } from '../events/event-store.js';
import { EVENT_TYPES } from '../events/event-types.js';
import { readSetting } from '../settings/settings-store.js';
import { deletePat, insertPat, listPats, newPatSecret, PATS_PER_USER } from './pat-store.js';

/** Any signed-in user manages their own tokens, whatever their role (as unleash-server). */
const OWN = { permission: 'read' } as const;

/**
 * The user making the request; 403 for an admin API token, which belongs to no user, and for a
 * personal access token: a leaked token must not be able to make itself new ones (or outlive its
 * expiry through them), nor hide by deleting the others.
 */
function userIdOf(request: FastifyRequest): number {
  const { userId, credential } = actorOf(request);
  if (credential === 'personal-access-token') throw new ApiError('PATS_NEED_SESSION');
  if (userId === undefined) throw new ApiError('PATS_NEED_USER');
  return userId;
}

const DAY_MS = 86_400_000;

/**
 * Personal access tokens of the signed-in user: listed, created (the secret shown once, only its
 * hash stored) and deleted. A token acts for its user with the user's role.
 */
export function personalAccessTokenRoutes(
  app: FastifyInstance,
  db: Database,
  guard: (request: FastifyRequest) => Promise<void>,
  now: () => Date,
): void {
  const typed = app.withTypeProvider<JsonSchemaToTsProvider>();

  typed.get(
    '/api/admin/user/tokens',
    { onRequest: guard, config: OWN },
    async function listPersonalAccessTokens(request) {
      return { pats: await listPats(db, userIdOf(request)) };
    },
  );

  typed.post(
    '/api/admin/user/tokens',
    {
      schema: {
        body: {
          type: 'object',
          required: ['description', 'expiresAt'],
          properties: {
            description: { type: 'string', minLength: 1, maxLength: 255 },
            expiresAt: { type: 'string', format: 'date-time' },
          },
        },
      },
      onRequest: guard,
      config: OWN,
    },
    async function createPersonalAccessToken(request, reply) {
      const userId = userIdOf(request);
      const description = request.body.description.trim();
      if (description === '') throw new ApiError('BAD_DATA', 'PAT description cannot be empty.');
      const expiresAt = new Date(request.body.expiresAt);
      if (!(expiresAt.getTime() > now().getTime())) {
        throw new ApiError('BAD_DATA', 'The expiry date should be in future.');
      }
      const { maxLifetimeDays } = await readSetting(db, 'personalAccessTokens');
      if (
        maxLifetimeDays !== null &&
        expiresAt.getTime() > now().getTime() + maxLifetimeDays * DAY_MS
      ) {
        throw new ApiError(
          'BAD_DATA',
          `A personal access token may live ${maxLifetimeDays} days at most on this server (an Admin's setting); choose an earlier expiresAt.`,
        );
      }
      const secret = newPatSecret();
      const by = actorOf(request);
      const pat = await refuseDuplicate('A PAT with this description', () =>
        db.transaction(async (tx) => {
          // One user's creations are serialised, so the cap holds under concurrent requests.
          await tx.query('SELECT 1 FROM users WHERE id = $1 FOR UPDATE', [userId]);
          const [counted] = await tx.query<{ n: number }>(
            'SELECT count(*)::int AS n FROM personal_access_tokens WHERE user_id = $1',
            [userId],
          );
          if ((counted?.n ?? 0) >= PATS_PER_USER) throw new ApiError('PAT_LIMIT');
          const created = await insertPat(tx, { userId, description, expiresAt, secret });
          await recordEvent(tx, { type: EVENT_TYPES.patCreated, by, data: created });
          return created;
        }),
      );
      return reply.status(201).send({ ...pat, secret });
    },
  );

  typed.delete(
    '/api/admin/user/tokens/:id',
    {
      schema: {
        params: {
          type: 'object',
          required: ['id'],
          properties: { id: { type: 'integer', minimum: 1, maximum: 2_147_483_647 } },
        },
      },
      onRequest: guard,
      config: OWN,
    },
    async function deletePersonalAccessToken(request, reply) {
      const userId = userIdOf(request);
      const by = actorOf(request);
      await db.transaction(async (tx) => {
        const deleted = await deletePat(tx, userId, request.params.id);
        if (!deleted) {
          throw new ApiError(
            'NOT_FOUND',
            `You have no personal access token ${request.params.id}.`,
          );
        }
        await recordEvent(tx, { type: EVENT_TYPES.patDeleted, by, preData: deleted });
      });
      return reply.status(200).send();
    },
  );
}
