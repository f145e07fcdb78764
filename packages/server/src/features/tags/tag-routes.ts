import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { FromSchema } from 'json-schema-to-ts';
import { actorOf } from '../../auth/actor.js';
import type { Database } from '../../db/database.js';
import { ApiError } from '../../errors.js';
import type { RevisionTracker } from '../../revision.js';
import { adminResource } from '../admin-resource.js';
import { writeConfig } from '../config-write.js';
import { recordEvent } from '../events/event-store.js';
import { EVENT_TYPES } from '../events/event-types.js';
import { bumpFlagVersion } from '../flags/flag-store.js';
import { recordTagEvents } from './feature-tag-routes.js';
import { tagParams, tagSchema, tagTypeSchema } from './tag-schemas.js';
import {
  featuresTagged,
  findTagType,
  listTags,
  listTagTypes,
  requireTagTypes,
  tagExists,
} from './tag-store.js';

const EDIT = { permission: 'edit' } as const;

/** A PUT's body: every field may be left out. */
const tagTypeUpdateBody = { ...tagTypeSchema, required: [] } as const;

/**
 * Tags on their own (`/api/admin/tags`) and tag types (`/api/admin/tag-types`). Neither is served
 * to SDKs, so their writes diff no flag, except deleting a tag, which takes it off the flags that
 * carry it.
 */
export function tagRoutes(
  app: FastifyInstance,
  db: Database,
  revisions: RevisionTracker,
  guard: (request: FastifyRequest) => Promise<void>,
): void {
  const typed = app.withTypeProvider<JsonSchemaToTsProvider>();

  typed.get('/api/admin/tags', { onRequest: guard }, async function adminListTags() {
    return { version: 1, tags: await listTags(db) };
  });

  typed.get(
    '/api/admin/tags/:type',
    { schema: { params: { ...tagParams, required: ['type'] } }, onRequest: guard },
    async function adminListTagsOfType(request) {
      return { version: 1, tags: await listTags(db, request.params.type) };
    },
  );

  typed.get(
    '/api/admin/tags/:type/:value',
    { schema: { params: tagParams }, onRequest: guard },
    async function adminReadTag(request) {
      const { type, value } = request.params;
      if (!(await tagExists(db, { type, value }))) {
        throw new ApiError('NOT_FOUND', `No tag with type: [${type}] and value [${value}].`);
      }
      return { version: 1, tag: { type, value } };
    },
  );

  typed.post(
    '/api/admin/tags',
    { schema: { body: tagSchema }, onRequest: guard, config: EDIT },
    async function adminCreateTag(request, reply) {
      const tag = { type: request.body.type, value: request.body.value };
      const actor = actorOf(request);
      await writeConfig(db, revisions, async (tx, scope) => {
        scope.flags();
        await requireTagTypes(tx, [tag]);
        if (await tagExists(tx, tag)) {
          throw new ApiError('NAME_EXISTS', `A tag of ${tag.type}:${tag.value} already exists.`);
        }
        await tx.query('INSERT INTO tags (type, value) VALUES ($1, $2)', [tag.type, tag.value]);
        await recordEvent(tx, { type: EVENT_TYPES.tagCreated, by: actor, data: tag });
      });
      return reply.status(201).send({ version: 1, tag });
    },
  );

  typed.delete(
    '/api/admin/tags/:type/:value',
    { schema: { params: tagParams }, onRequest: guard, config: { permission: 'admin' } },
    async function adminDeleteTag(request, reply) {
      const tag = { type: request.params.type, value: request.params.value };
      const actor = actorOf(request);
      await writeConfig(db, revisions, async (tx, scope) => {
        scope.flags();
        if (!(await tagExists(tx, tag))) return;
        const flags = await featuresTagged(tx, tag.type, tag.value);
        await tx.query('DELETE FROM feature_tags WHERE tag_type = $1 AND tag_value = $2', [
          tag.type,
          tag.value,
        ]);
        await tx.query('DELETE FROM tags WHERE type = $1 AND value = $2', [tag.type, tag.value]);
        for (const flag of flags) {
          scope.flags(flag.name);
          await bumpFlagVersion(tx, flag.name);
          await recordTagEvents(tx, actor, flag, [], [tag]);
        }
        await recordEvent(tx, { type: EVENT_TYPES.tagDeleted, by: actor, preData: tag });
      });
      return reply.status(200).send();
    },
  );

  adminResource(
    { app, db, revisions, guard },
    {
      path: '/api/admin/tag-types',
      key: { param: 'name', schema: { type: 'string' } },
      permission: 'edit',
      served: false,
      events: {
        created: EVENT_TYPES.tagTypeCreated,
        updated: EVENT_TYPES.tagTypeUpdated,
        deleted: EVENT_TYPES.tagTypeDeleted,
      },
      notFound: () => new ApiError('NOT_FOUND', 'Could not find tag-type.'),
      find: (q, name: string) => findTagType(q, name),
      list: async (q) => ({ version: 1, tagTypes: await listTagTypes(q) }),
      read: (_q, tagType) => ({ version: 1, tagType }),
      create: {
        body: tagTypeSchema,
        async insert(tx, body: FromSchema<typeof tagTypeSchema>) {
          const tagType = {
            name: body.name,
            description: body.description ?? null,
            icon: body.icon ?? null,
            color: body.color ?? null,
          };
          if (await findTagType(tx, tagType.name)) {
            throw new ApiError(
              'NAME_EXISTS',
              `There already exists a tag-type with the name ${tagType.name}.`,
            );
          }
          await tx.query(
            'INSERT INTO tag_types (name, description, icon, color) VALUES ($1, $2, $3, $4)',
            [tagType.name, tagType.description, tagType.icon, tagType.color],
          );
          return tagType;
        },
        answer: (tagType) => tagType,
      },
      update: {
        body: tagTypeUpdateBody,
        check(name, body: FromSchema<typeof tagTypeUpdateBody>) {
          if (body.name !== undefined && body.name !== name) {
            throw new ApiError('BAD_DATA', 'A tag type cannot be renamed: the body names another.');
          }
        },
        change: (_tx, before, body: FromSchema<typeof tagTypeUpdateBody>) => ({
          name: before.name,
          description: body.description ?? before.description,
          icon: body.icon === undefined ? before.icon : body.icon,
          color: body.color === undefined ? before.color : body.color,
        }),
        async save(tx, after) {
          await tx.query(
            'UPDATE tag_types SET description = $2, icon = $3, color = $4 WHERE name = $1',
            [after.name, after.description, after.icon, after.color],
          );
        },
        answer: () => ({ status: 200 }),
      },
      remove: {
        usedBy: async (tx, tagType) =>
          (await featuresTagged(tx, tagType.name)).map(
            (flag) => `flag "${flag.name}" (project "${flag.project}")`,
          ),
        what: (tagType) => `Tag type "${tagType.name}"`,
        remedy: 'Remove its tags from these flags first.',
        // Its tags that no flag carries go with it.
        table: 'tag_types',
        column: 'name',
        status: 200,
      },
    },
  );

  typed.post(
    '/api/admin/tag-types/validate',
    { schema: { body: tagTypeSchema }, onRequest: guard, config: { permission: 'read' } },
    async function adminValidateTagType(request) {
      const { name } = request.body;
      if (await findTagType(db, name)) {
        throw new ApiError('NAME_EXISTS', `There already exists a tag-type with the name ${name}.`);
      }
      return { valid: true, tagType: request.body };
    },
  );
}
