import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type Actor, actorOf } from '../../auth/actor.js';
import type { Database, Transaction } from '../../db/database.js';
import { ApiError } from '../../errors.js';
import type { RevisionTracker } from '../../revision.js';
import { writeConfig } from '../config-write.js';
import { recordEvent, tagsOfFlag } from '../events/event-store.js';
import { EVENT_TYPES } from '../events/event-types.js';
import { bumpFlagVersion, findFlag } from '../flags/flag-store.js';
import { tagParams, tagSchema } from './tag-schemas.js';
import {
  addFeatureTag,
  lockFeature,
  removeFeatureTag,
  requireTagTypes,
  type Tag,
  tagsOfFeature,
} from './tag-store.js';

const EDIT = { permission: 'edit' } as const;

const featureParams = {
  type: 'object',
  required: ['feature'],
  properties: { feature: { type: 'string' } },
} as const;

/**
 * A flag's tags: listed, added, changed in one go, removed. Each write locks the flag, bumps its
 * version, records `feature-tagged` / `feature-untagged` per tag that changed, and tells the change
 * log only this flag changed (tag filters of the client API see it at once).
 */
export function featureTagRoutes(
  app: FastifyInstance,
  db: Database,
  revisions: RevisionTracker,
  guard: (request: FastifyRequest) => Promise<void>,
): void {
  const typed = app.withTypeProvider<JsonSchemaToTsProvider>();

  /** Adds and removes tags of one flag; answers nothing, records the events. */
  const retag = (
    request: FastifyRequest,
    feature: string,
    changes: { added: readonly Tag[]; removed: readonly Tag[] },
  ) => {
    const actor = actorOf(request);
    return writeConfig(db, revisions, async (tx, scope) => {
      const flag = await lockFeature(tx, feature);
      scope.flags(flag.name);
      await requireTagTypes(tx, changes.added);
      const untagged: Tag[] = [];
      for (const tag of changes.removed) {
        if (await removeFeatureTag(tx, flag.name, tag)) untagged.push(tag);
      }
      const tagged: Tag[] = [];
      for (const tag of changes.added) {
        if (await addFeatureTag(tx, flag.name, tag)) tagged.push(tag);
      }
      if (tagged.length + untagged.length === 0) return;
      await bumpFlagVersion(tx, flag.name);
      await recordTagEvents(tx, actor, flag, tagged, untagged);
    });
  };

  typed.get(
    '/api/admin/features/:feature/tags',
    { schema: { params: featureParams }, onRequest: guard },
    async function adminListFeatureTags(request) {
      const { feature } = request.params;
      if (!(await findFlag(db, feature))) {
        throw new ApiError('NOT_FOUND', `Could not find feature with name ${feature}.`);
      }
      return { version: 1, tags: await tagsOfFeature(db, feature) };
    },
  );

  typed.post(
    '/api/admin/features/:feature/tags',
    { schema: { params: featureParams, body: tagSchema }, onRequest: guard, config: EDIT },
    async function adminTagFeature(request, reply) {
      const tag = { type: request.body.type, value: request.body.value };
      await retag(request, request.params.feature, { added: [tag], removed: [] });
      return reply.status(201).send(tag);
    },
  );

  typed.put(
    '/api/admin/features/:feature/tags',
    {
      schema: {
        params: featureParams,
        body: {
          type: 'object',
          additionalProperties: false,
          properties: {
            addedTags: { type: 'array', maxItems: 1000, items: tagSchema },
            removedTags: { type: 'array', maxItems: 1000, items: tagSchema },
          },
        },
      },
      onRequest: guard,
      config: EDIT,
    },
    async function adminRetagFeature(request) {
      const { feature } = request.params;
      const pick = (tags: readonly Tag[] | undefined) =>
        (tags ?? []).map((tag) => ({ type: tag.type, value: tag.value }));
      await retag(request, feature, {
        added: pick(request.body.addedTags),
        removed: pick(request.body.removedTags),
      });
      return { version: 1, tags: await tagsOfFeature(db, feature) };
    },
  );

  typed.delete(
    '/api/admin/features/:feature/tags/:type/:value',
    {
      schema: {
        params: {
          ...tagParams,
          required: ['feature', 'type', 'value'],
          properties: { ...tagParams.properties, feature: { type: 'string' } },
        },
      },
      onRequest: guard,
      config: EDIT,
    },
    async function adminUntagFeature(request, reply) {
      const { feature, type, value } = request.params;
      await retag(request, feature, { added: [], removed: [{ type, value }] });
      return reply.status(200).send();
    },
  );
}

/** `feature-untagged` then `feature-tagged` events of one flag, each with the flag's tags after. */
export async function recordTagEvents(
  tx: Transaction,
  actor: Actor,
  flag: { name: string; project: string },
  tagged: readonly Tag[],
  untagged: readonly Tag[],
): Promise<void> {
  const tags = await tagsOfFlag(tx, flag.name);
  const common = { by: actor, project: flag.project, featureName: flag.name, tags };
  for (const tag of untagged) {
    await recordEvent(tx, { ...common, type: EVENT_TYPES.featureUntagged, preData: tag });
  }
  for (const tag of tagged) {
    await recordEvent(tx, { ...common, type: EVENT_TYPES.featureTagged, data: tag });
  }
}
