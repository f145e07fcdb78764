import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { actorOf } from '../../auth/actor.js';
import type { Database } from '../../db/database.js';
import { ApiError } from '../../errors.js';
import type { RevisionTracker } from '../../revision.js';
import { writeConfig } from '../config-write.js';
import { recordEvent } from '../events/event-store.js';
import { EVENT_TYPES } from '../events/event-types.js';
import { bumpFlagVersion } from '../flags/flag-store.js';
import { refuseWhileUsed } from '../in-use.js';
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

const nameParams = {
  type: 'object',
  required: ['name'],
  properties: { name: { type: 'string' } },
} as const;

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

  typed.get('/api/admin/tag-types', { onRequest: guard }, async function adminListTagTypes() {
    return { version: 1, tagTypes: await listTagTypes(db) };
  });

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

  typed.post(
    '/api/admin/tag-types',
    { schema: { body: tagTypeSchema }, onRequest: guard, config: EDIT },
    async function adminCreateTagType(request, reply) {
      const tagType = {
        name: request.body.name,
        description: request.body.description ?? null,
        icon: request.body.icon ?? null,
        color: request.body.color ?? null,
      };
      const actor = actorOf(request);
      await writeConfig(db, revisions, async (tx, scope) => {
        scope.flags();
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
        await recordEvent(tx, { type: EVENT_TYPES.tagTypeCreated, by: actor, data: tagType });
      });
      return reply.status(201).send(tagType);
    },
  );

  typed.get(
    '/api/admin/tag-types/:name',
    { schema: { params: nameParams }, onRequest: guard },
    async function adminReadTagType(request) {
      const tagType = await findTagType(db, request.params.name);
      if (!tagType) throw new ApiError('NOT_FOUND', 'Could not find tag-type.');
      return { version: 1, tagType };
    },
  );

  typed.put(
    '/api/admin/tag-types/:name',
    {
      schema: {
        params: nameParams,
        body: { ...tagTypeSchema, required: [] },
      },
      onRequest: guard,
      config: EDIT,
    },
    async function adminUpdateTagType(request, reply) {
      const { name } = request.params;
      const body = request.body;
      if (body.name !== undefined && body.name !== name) {
        throw new ApiError('BAD_DATA', 'A tag type cannot be renamed: the body names another.');
      }
      const actor = actorOf(request);
      await writeConfig(db, revisions, async (tx, scope) => {
        scope.flags();
        const before = await findTagType(tx, name);
        if (!before) throw new ApiError('NOT_FOUND', 'Could not find tag-type.');
        const after = {
          name,
          description: body.description ?? before.description,
          icon: body.icon === undefined ? before.icon : body.icon,
          color: body.color === undefined ? before.color : body.color,
        };
        await tx.query(
          'UPDATE tag_types SET description = $2, icon = $3, color = $4 WHERE name = $1',
          [name, after.description, after.icon, after.color],
        );
        await recordEvent(tx, {
          type: EVENT_TYPES.tagTypeUpdated,
          by: actor,
          data: after,
          preData: before,
        });
      });
      return reply.status(200).send();
    },
  );

  typed.delete(
    '/api/admin/tag-types/:name',
    { schema: { params: nameParams }, onRequest: guard, config: EDIT },
    async function adminDeleteTagType(request, reply) {
      const { name } = request.params;
      const actor = actorOf(request);
      await writeConfig(db, revisions, async (tx, scope) => {
        scope.flags();
        const before = await findTagType(tx, name);
        if (!before) throw new ApiError('NOT_FOUND', 'Could not find tag-type.');
        const flags = await featuresTagged(tx, name);
        refuseWhileUsed(
          `Tag type "${name}"`,
          flags.map((flag) => `flag "${flag.name}" (project "${flag.project}")`),
          'Remove its tags from these flags first.',
        );
        // Its tags that no flag carries go with it.
        await tx.query('DELETE FROM tag_types WHERE name = $1', [name]);
        await recordEvent(tx, { type: EVENT_TYPES.tagTypeDeleted, by: actor, preData: before });
      });
      return reply.status(200).send();
    },
  );
}
