import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { FromSchema } from 'json-schema-to-ts';
import { actorOf } from '../../auth/actor.js';
import type { Database, Queryable } from '../../db/database.js';
import { ApiError } from '../../errors.js';
import type { RevisionTracker } from '../../revision.js';
import { adminResource } from '../admin-resource.js';
import { idSchema, writeConfig } from '../config-write.js';
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

const createBody = {
  type: 'object',
  required: ['id'],
  properties: { id: idSchema, ...projectFields },
} as const;

const updateBody = { type: 'object', properties: projectFields } as const;

/** The project, locked for the rest of the transaction. */
async function lockProject(tx: Queryable, id: string): Promise<Project | undefined> {
  await tx.query('SELECT 1 FROM projects WHERE id = $1 FOR UPDATE', [id]);
  return findProject(tx, id);
}

/** The project locked for the rest of the transaction; 404 when there is none. */
async function requireLockedProject(tx: Queryable, id: string): Promise<Project> {
  const project = await lockProject(tx, id);
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

  adminResource(
    { app, db, revisions, guard },
    {
      path: '/api/admin/projects',
      key: { param: 'project', schema: { type: 'string' } },
      served: true,
      events: {
        created: EVENT_TYPES.projectCreated,
        updated: EVENT_TYPES.projectUpdated,
        deleted: EVENT_TYPES.projectDeleted,
      },
      eventScope: (project: Project) => ({ project: project.id }),
      notFound: (id: string) => new ApiError('NOT_FOUND', `There is no project "${id}".`),
      find: (q, id: string, lock) => (lock ? lockProject(q, id) : findProject(q, id)),
      list: async (q) => ({ projects: await listProjects(q) }),
      read: async (q, project) => ({
        ...project,
        environments: await environmentsOfProject(q, project.id),
      }),
      create: {
        body: createBody,
        duplicate: (body: FromSchema<typeof createBody>) => `Project "${body.id}"`,
        async insert(tx, body: FromSchema<typeof createBody>) {
          const project = {
            id: body.id,
            name: body.name ?? body.id,
            description: body.description ?? null,
          };
          await insertProject(tx, project);
          return project;
        },
        answer: (project) => project,
      },
      update: {
        body: updateBody,
        // Names and descriptions are not served to SDKs: no flag to diff.
        served: false,
        change: (_tx, before, body: FromSchema<typeof updateBody>) => ({
          id: before.id,
          name: body.name ?? before.name,
          description: body.description === undefined ? before.description : body.description,
        }),
        async save(tx, after) {
          await tx.query('UPDATE projects SET name = $2, description = $3 WHERE id = $1', [
            after.id,
            after.name,
            after.description,
          ]);
        },
        answer: (after) => ({ status: 200, body: after }),
      },
      remove: {
        check(id) {
          if (id === 'default') {
            throw new ApiError('BAD_DATA', 'The default project cannot be deleted.');
          }
        },
        async usedBy(tx, project) {
          const flags = await flagsOfProject(tx, project.id);
          const tokens = await tokensOfProject(tx, project.id);
          return [
            ...flags.map((flag) => `flag "${flag.name}"${flag.archived ? ' (archived)' : ''}`),
            ...tokens.map((token) => `API token "${token.tokenName}" (id ${token.id})`),
          ];
        },
        what: (project) => `Project "${project.id}"`,
        remedy: 'Delete its flags (archived ones too) and those tokens first.',
        table: 'projects',
        column: 'id',
        status: 200,
      },
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
        await requireLockedProject(tx, project);
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
        await requireLockedProject(tx, project);
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
