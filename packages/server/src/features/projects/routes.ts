import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { actorOf } from '../../auth/actor.js';
import type { Database, Queryable } from '../../db/database.js';
import { ApiError } from '../../errors.js';
import type { RevisionTracker } from '../../revision.js';
import { idSchema, refuseDuplicate, writeConfig } from '../config-write.js';
import { findEnvironment, flagsUsingEnvironment } from '../environments/environment-store.js';
import { recordEvent } from '../events/event-store.js';
import { EVENT_TYPES } from '../events/event-types.js';
import { refuseWhileUsed } from '../in-use.js';
import {
  environmentsOfProject,
  findProject,
  flagsOfProject,
  insertProject,
  listProjects,
  type Project,
  tokensOfProject,
} from './project-store.js';

const projectParams = {
  type: 'object',
  required: ['project'],
  properties: { project: { type: 'string' } },
} as const;

const projectFields = {
  name: { type: 'string', minLength: 1, maxLength: 100 },
  description: { type: ['string', 'null'], maxLength: 1000 },
} as const;

/** The project locked for the rest of the transaction; 404 when there is none. */
async function lockProject(tx: Queryable, id: string): Promise<Project> {
  await tx.query('SELECT 1 FROM projects WHERE id = $1 FOR UPDATE', [id]);
  const project = await findProject(tx, id);
  if (!project) throw new ApiError('NOT_FOUND', `There is no project "${id}".`);
  return project;
}

/**
 * Projects: listed, created with every environment, read, updated, deleted while they hold no
 * flag and no API token names them (409 naming them), and their environments added and removed.
 */
export function projectRoutes(
  app: FastifyInstance,
  db: Database,
  revisions: RevisionTracker,
  guard: (request: FastifyRequest) => Promise<void>,
): void {
  const typed = app.withTypeProvider<JsonSchemaToTsProvider>();

  typed.get('/api/admin/projects', { onRequest: guard }, async function adminListProjects() {
    return { projects: await listProjects(db) };
  });

  typed.post(
    '/api/admin/projects',
    {
      schema: {
        body: {
          type: 'object',
          required: ['id'],
          properties: { id: idSchema, ...projectFields },
        },
      },
      onRequest: guard,
    },
    async function adminCreateProject(request, reply) {
      const { id, name, description } = request.body;
      const project = { id, name: name ?? id, description: description ?? null };
      const actor = actorOf(request);
      await refuseDuplicate(`Project "${id}"`, () =>
        writeConfig(db, revisions, async (tx) => {
          await insertProject(tx, project);
          await recordEvent(tx, {
            type: EVENT_TYPES.projectCreated,
            by: actor,
            project: id,
            data: project,
          });
        }),
      );
      return reply.status(201).send(project);
    },
  );

  typed.get(
    '/api/admin/projects/:project',
    { schema: { params: projectParams }, onRequest: guard },
    async function adminReadProject(request) {
      const { project } = request.params;
      const found = await findProject(db, project);
      if (!found) throw new ApiError('NOT_FOUND', `There is no project "${project}".`);
      return { ...found, environments: await environmentsOfProject(db, project) };
    },
  );

  typed.put(
    '/api/admin/projects/:project',
    {
      schema: { params: projectParams, body: { type: 'object', properties: projectFields } },
      onRequest: guard,
    },
    async function adminUpdateProject(request) {
      const { project } = request.params;
      const { name, description } = request.body;
      const actor = actorOf(request);
      // Names and descriptions are not served to SDKs: no flag to diff.
      return writeConfig(db, revisions, async (tx, scope) => {
        scope.flags();
        const before = await lockProject(tx, project);
        const after = {
          id: project,
          name: name ?? before.name,
          description: description === undefined ? before.description : description,
        };
        await tx.query('UPDATE projects SET name = $2, description = $3 WHERE id = $1', [
          project,
          after.name,
          after.description,
        ]);
        await recordEvent(tx, {
          type: EVENT_TYPES.projectUpdated,
          by: actor,
          project,
          data: after,
          preData: before,
        });
        return after;
      });
    },
  );

  typed.delete(
    '/api/admin/projects/:project',
    { schema: { params: projectParams }, onRequest: guard },
    async function adminDeleteProject(request, reply) {
      const { project } = request.params;
      if (project === 'default') {
        throw new ApiError('BAD_DATA', 'The default project cannot be deleted.');
      }
      const actor = actorOf(request);
      await writeConfig(db, revisions, async (tx) => {
        const before = await lockProject(tx, project);
        const flags = await flagsOfProject(tx, project);
        const tokens = await tokensOfProject(tx, project);
        refuseWhileUsed(
          `Project "${project}"`,
          [
            ...flags.map((flag) => `flag "${flag.name}"${flag.archived ? ' (archived)' : ''}`),
            ...tokens.map((token) => `API token "${token.tokenName}" (id ${token.id})`),
          ],
          'Delete its flags (archived ones too) and those tokens first.',
        );
        await tx.query('DELETE FROM projects WHERE id = $1', [project]);
        await recordEvent(tx, {
          type: EVENT_TYPES.projectDeleted,
          by: actor,
          project,
          preData: before,
        });
      });
      return reply.status(200).send();
    },
  );

  typed.post(
    '/api/admin/projects/:project/environments',
    {
      schema: {
        params: projectParams,
        body: {
          type: 'object',
          required: ['environment'],
          properties: { environment: { type: 'string', minLength: 1 } },
        },
      },
      onRequest: guard,
      config: { permission: 'edit' },
    },
    async function adminAddProjectEnvironment(request, reply) {
      const { project } = request.params;
      const { environment } = request.body;
      const actor = actorOf(request);
      await writeConfig(db, revisions, async (tx) => {
        await lockProject(tx, project);
        if (!(await findEnvironment(tx, environment))) {
          throw new ApiError('BAD_DATA', `Environment ${environment} does not exist.`);
        }
        const added = await tx.query(
          `INSERT INTO project_environments (project_id, environment_name) VALUES ($1, $2)
           ON CONFLICT DO NOTHING RETURNING 1`,
          [project, environment],
        );
        if (added.length === 0) {
          throw new ApiError(
            'NAME_EXISTS',
            `${project} already has the environment ${environment} enabled.`,
          );
        }
        await tx.query(
          `INSERT INTO feature_environments (feature_name, environment)
           SELECT name, $2 FROM features WHERE project = $1 ON CONFLICT DO NOTHING`,
          [project, environment],
        );
        await recordEvent(tx, {
          type: EVENT_TYPES.projectEnvironmentAdded,
          by: actor,
          project,
          environment,
        });
      });
      return reply.status(200).send();
    },
  );

  typed.delete(
    '/api/admin/projects/:project/environments/:environment',
    {
      schema: {
        params: {
          type: 'object',
          required: ['project', 'environment'],
          properties: { project: { type: 'string' }, environment: { type: 'string' } },
        },
      },
      onRequest: guard,
      config: { permission: 'edit' },
    },
    async function adminRemoveProjectEnvironment(request, reply) {
      const { project, environment } = request.params;
      const actor = actorOf(request);
      await writeConfig(db, revisions, async (tx) => {
        await lockProject(tx, project);
        const linked = await tx.query(
          'SELECT 1 FROM project_environments WHERE project_id = $1 AND environment_name = $2',
          [project, environment],
        );
        if (linked.length === 0) {
          throw new ApiError(
            'NOT_FOUND',
            `Project "${project}" does not have the environment "${environment}".`,
          );
        }
        const flags = await flagsUsingEnvironment(tx, environment, project);
        refuseWhileUsed(
          `Environment "${environment}" of project "${project}"`,
          flags.map((flag) => `flag "${flag.name}"`),
          'Disable those flags and remove their strategies there first.',
        );
        await tx.query(
          'DELETE FROM project_environments WHERE project_id = $1 AND environment_name = $2',
          [project, environment],
        );
        await tx.query(
          `DELETE FROM feature_environments fe USING features f
            WHERE f.name = fe.feature_name AND f.project = $1 AND fe.environment = $2`,
          [project, environment],
        );
        await recordEvent(tx, {
          type: EVENT_TYPES.projectEnvironmentRemoved,
          by: actor,
          project,
          environment,
        });
      });
      return reply.status(200).send();
    },
  );
}
