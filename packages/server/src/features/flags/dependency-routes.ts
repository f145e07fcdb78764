import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../../errors.js';
import { recordEvent, tagsOfFlag } from '../events/event-store.js';
import { EVENT_TYPES } from '../events/event-types.js';
import { dependencySchema, flagParams } from './flag-schemas.js';
import { bumpFlagVersion, findFlag } from './flag-store.js';
import { type FlagDeps, writeFlag } from './flag-write.js';

const EDIT = { permission: 'edit' } as const;

/**
 * A flag's parent (unleash-server 8.2: one parent, in the same project, one level deep): add,
 * remove one or all, and the flags that may be its parent. A parent that is not allowed is a 403
 * `InvalidOperationError`, as unleash-server answers it.
 */
export function dependencyRoutes(
  app: FastifyInstance,
  deps: FlagDeps,
  guard: (request: FastifyRequest) => Promise<void>,
): void {
  const typed = app.withTypeProvider<JsonSchemaToTsProvider>();
  const { db } = deps;
  const base = '/api/admin/projects/:project/features/:feature/dependencies';

  typed.post(
    base,
    { schema: { params: flagParams, body: dependencySchema }, onRequest: guard, config: EDIT },
    async function adminAddDependency(request, reply) {
      const { project, feature } = request.params;
      const { feature: parentName } = request.body;
      const enabled = request.body.enabled ?? true;
      const variants = enabled ? (request.body.variants ?? []) : [];
      await writeFlag(deps, request, { project, feature }, async (tx, child, by) => {
        const parent = await findFlag(tx, parentName);
        if (!parent || parent.archived_at !== null || parent.project !== project) {
          throw new ApiError(
            'INVALID_OPERATION',
            `There is no active feature "${parentName}" in project "${project}" to depend on.`,
          );
        }
        if (parent.name === child.name) {
          throw new ApiError('INVALID_OPERATION', 'A feature cannot depend on itself.');
        }
        const [parentHasParent, childHasChildren] = await Promise.all([
          tx.query('SELECT 1 FROM feature_dependencies WHERE child = $1', [parent.name]),
          tx.query('SELECT 1 FROM feature_dependencies WHERE parent = $1', [child.name]),
        ]);
        if (parentHasParent.length > 0 || childHasChildren.length > 0) {
          throw new ApiError(
            'INVALID_OPERATION',
            'Dependencies are one level deep: a parent cannot have a parent, a child cannot have children.',
          );
        }
        // One parent per flag: a new one replaces the old one.
        await tx.query('DELETE FROM feature_dependencies WHERE child = $1', [child.name]);
        await tx.query(
          `INSERT INTO feature_dependencies (parent, child, enabled, variants)
           VALUES ($1, $2, $3, $4::jsonb)`,
          [parent.name, child.name, enabled, JSON.stringify(variants)],
        );
        await bumpFlagVersion(tx, parent.name);
        await recordEvent(tx, {
          type: EVENT_TYPES.featureDependencyAdded,
          by,
          project,
          featureName: child.name,
          data: { feature: parent.name, enabled, variants },
          tags: await tagsOfFlag(tx, child.name),
        });
      });
      return reply.status(200).send();
    },
  );

  typed.delete(
    `${base}/:parent`,
    {
      schema: {
        params: {
          type: 'object',
          required: ['project', 'feature', 'parent'],
          properties: {
            project: { type: 'string' },
            feature: { type: 'string' },
            parent: { type: 'string' },
          },
        },
      },
      onRequest: guard,
      config: EDIT,
    },
    async function adminRemoveDependency(request, reply) {
      const { project, feature, parent } = request.params;
      await writeFlag(deps, request, { project, feature }, async (tx, child, by) => {
        const removed = await tx.query(
          'DELETE FROM feature_dependencies WHERE child = $1 AND parent = $2 RETURNING parent',
          [child.name, parent],
        );
        if (removed.length === 0) {
          throw new ApiError(
            'NOT_FOUND',
            `Feature "${child.name}" does not depend on "${parent}".`,
          );
        }
        await bumpFlagVersion(tx, parent);
        await recordEvent(tx, {
          type: EVENT_TYPES.featureDependencyRemoved,
          by,
          project,
          featureName: child.name,
          data: { feature: parent },
          tags: await tagsOfFlag(tx, child.name),
        });
      });
      return reply.status(200).send();
    },
  );

  typed.delete(
    base,
    { schema: { params: flagParams }, onRequest: guard, config: EDIT },
    async function adminRemoveDependencies(request, reply) {
      const { project, feature } = request.params;
      await writeFlag(deps, request, { project, feature }, async (tx, child, by) => {
        const removed = await tx.query<{ parent: string }>(
          'DELETE FROM feature_dependencies WHERE child = $1 RETURNING parent',
          [child.name],
        );
        if (removed.length === 0) {
          throw new ApiError('NOT_FOUND', `Feature "${child.name}" has no dependencies to remove.`);
        }
        for (const row of removed) await bumpFlagVersion(tx, row.parent);
        await recordEvent(tx, {
          type: EVENT_TYPES.featureDependenciesRemoved,
          by,
          project,
          featureName: child.name,
          preData: removed.map((row) => ({ feature: row.parent })),
          tags: await tagsOfFlag(tx, child.name),
        });
      });
      return reply.status(200).send();
    },
  );

  const flagsParams = {
    type: 'object',
    required: ['project'],
    properties: { project: { type: 'string' } },
  } as const;

  // unleash-server's path is `…/:feature/parents`; `dependencies/possible-parents` answers the same.
  for (const path of [
    `${base}/possible-parents`,
    '/api/admin/projects/:project/features/:feature/parents',
  ]) {
    typed.get(
      path,
      { schema: { params: flagParams }, onRequest: guard },
      async function adminPossibleParents(request) {
        const { feature } = request.params;
        // The flags of the child's project (none when it does not exist), as unleash-server.
        const rows = await db.query<{ name: string }>(
          `SELECT f.name FROM features f
            WHERE f.project = (SELECT project FROM features WHERE name = $1)
              AND f.archived_at IS NULL AND f.name <> $1
              AND NOT EXISTS (SELECT 1 FROM feature_dependencies d WHERE d.child = f.name)
            ORDER BY f.name`,
          [feature],
        );
        return rows.map((row) => row.name);
      },
    );
  }

  typed.get(
    '/api/admin/projects/:project/features/:feature/parent-variants',
    { schema: { params: flagParams }, onRequest: guard },
    async function adminParentVariants(request) {
      const { feature } = request.params;
      // The names of the flag's variants, of its strategies and of its environments.
      const rows = await db.query<{ name: string }>(
        `SELECT DISTINCT v->>'name' AS name FROM (
            SELECT jsonb_array_elements(variants) AS v FROM feature_strategies WHERE feature_name = $1
            UNION ALL
            SELECT jsonb_array_elements(variants) AS v FROM feature_environments WHERE feature_name = $1
          ) AS all_variants
          WHERE v->>'name' IS NOT NULL`,
        [feature],
      );
      return rows.map((row) => row.name).sort();
    },
  );

  typed.get(
    '/api/admin/projects/:project/dependencies',
    { schema: { params: flagsParams }, onRequest: guard },
    async function adminAnyDependencies(_request, reply) {
      // Whether any flag (of any project, as unleash-server answers) has a parent: `true`/`false`.
      const rows = await db.query('SELECT 1 FROM feature_dependencies LIMIT 1');
      return reply.type('application/json').send(JSON.stringify(rows.length > 0));
    },
  );
}
