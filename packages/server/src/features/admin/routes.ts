import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import { constraintSchema } from '@flags/schemas';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Database } from '../../db/database.js';
import { ApiError } from '../../errors.js';
import { bumpConfigRevision, type RevisionTracker } from '../../revision.js';

const idSchema = {
  type: 'string',
  minLength: 1,
  maxLength: 100,
  pattern: '^[A-Za-z0-9_.~-]+$',
} as const;

/** Postgres unique violation → 409 with a readable message. */
async function uniquely<T>(what: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if ((error as { code?: string }).code === '23505') {
      throw new ApiError('NAME_EXISTS', `${what} already exists.`);
    }
    throw error;
  }
}

/**
 * The configuration the import refers to but does not create: projects, environments,
 * segments, custom strategies; plus archiving a flag and reading context fields.
 */
export function adminRoutes(
  app: FastifyInstance,
  db: Database,
  revisions: RevisionTracker,
  guard: (request: FastifyRequest) => Promise<void>,
): void {
  const typed = app.withTypeProvider<JsonSchemaToTsProvider>();
  const write = async <T>(
    fn: (tx: Parameters<Parameters<Database['transaction']>[0]>[0]) => Promise<T>,
  ) => {
    const result = await db.transaction(async (tx) => {
      const value = await fn(tx);
      await bumpConfigRevision(tx);
      return value;
    });
    revisions.invalidate();
    return result;
  };

  typed.get('/api/admin/projects', { onRequest: guard }, async function adminListProjects() {
    const projects = await db.query('SELECT id, name, description FROM projects ORDER BY id');
    return { projects };
  });

  typed.post(
    '/api/admin/projects',
    {
      schema: {
        body: {
          type: 'object',
          required: ['id'],
          properties: { id: idSchema, name: { type: 'string' }, description: { type: 'string' } },
        },
      },
      onRequest: guard,
    },
    async function adminCreateProject(request, reply) {
      const { id, name, description } = request.body;
      await uniquely(`Project "${id}"`, () =>
        write(async (tx) => {
          await tx.query('INSERT INTO projects (id, name, description) VALUES ($1, $2, $3)', [
            id,
            name ?? id,
            description ?? null,
          ]);
          await tx.query(
            `INSERT INTO project_environments (project_id, environment_name)
             SELECT $1, name FROM environments`,
            [id],
          );
        }),
      );
      return reply.status(201).send({ id, name: name ?? id, description: description ?? null });
    },
  );

  typed.get(
    '/api/admin/environments',
    { onRequest: guard },
    async function adminListEnvironments() {
      const environments = await db.query(
        'SELECT name, type, sort_order AS "sortOrder", enabled FROM environments ORDER BY sort_order, name',
      );
      return { version: 1, environments };
    },
  );

  typed.post(
    '/api/admin/environments',
    {
      schema: {
        body: {
          type: 'object',
          required: ['name', 'type'],
          properties: {
            name: idSchema,
            type: { type: 'string', minLength: 1 },
            sortOrder: { type: 'integer' },
          },
        },
      },
      onRequest: guard,
    },
    async function adminCreateEnvironment(request, reply) {
      const { name, type, sortOrder } = request.body;
      await uniquely(`Environment "${name}"`, () =>
        write(async (tx) => {
          await tx.query('INSERT INTO environments (name, type, sort_order) VALUES ($1, $2, $3)', [
            name,
            type,
            sortOrder ?? 0,
          ]);
          await tx.query(
            'INSERT INTO project_environments (project_id, environment_name) SELECT id, $1 FROM projects',
            [name],
          );
        }),
      );
      return reply.status(201).send({ name, type, sortOrder: sortOrder ?? 0, enabled: true });
    },
  );

  typed.get('/api/admin/segments', { onRequest: guard }, async function adminListSegments() {
    const segments = await db.query(
      'SELECT id, name, description, project, constraints FROM segments ORDER BY id',
    );
    return { segments };
  });

  typed.post(
    '/api/admin/segments',
    {
      schema: {
        body: {
          type: 'object',
          required: ['name', 'constraints'],
          properties: {
            name: { type: 'string', minLength: 1, maxLength: 100 },
            description: { type: 'string' },
            project: { type: 'string' },
            constraints: { type: 'array', items: constraintSchema },
          },
        },
      },
      onRequest: guard,
    },
    async function adminCreateSegment(request, reply) {
      const { name, description, project, constraints } = request.body;
      const rows = await uniquely(`Segment "${name}"`, () =>
        write(async (tx) => {
          if (project) {
            const found = await tx.query('SELECT 1 FROM projects WHERE id = $1', [project]);
            if (found.length === 0)
              throw new ApiError('BAD_DATA', `Project "${project}" does not exist.`);
          }
          return tx.query<{ id: number }>(
            `INSERT INTO segments (name, description, project, constraints)
             VALUES ($1, $2, $3, $4::jsonb) RETURNING id`,
            [name, description ?? null, project ?? null, JSON.stringify(constraints)],
          );
        }),
      );
      return reply.status(201).send({ id: rows[0]!.id, name, description, project, constraints });
    },
  );

  typed.get('/api/admin/strategies', { onRequest: guard }, async function adminListStrategies() {
    const strategies = await db.query(
      `SELECT name, title, description, parameters, NOT built_in AS editable
         FROM strategies ORDER BY built_in DESC, name`,
    );
    return { version: 1, strategies };
  });

  typed.post(
    '/api/admin/strategies',
    {
      schema: {
        body: {
          type: 'object',
          required: ['name'],
          properties: {
            name: { type: 'string', minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_.~-]+$' },
            title: { type: 'string' },
            description: { type: 'string' },
            parameters: { type: 'array', items: { type: 'object' } },
          },
        },
      },
      onRequest: guard,
    },
    async function adminCreateStrategy(request, reply) {
      const { name, title, description, parameters } = request.body;
      await uniquely(`Strategy "${name}"`, () =>
        db.query(
          'INSERT INTO strategies (name, title, description, parameters) VALUES ($1, $2, $3, $4::jsonb)',
          [name, title ?? null, description ?? null, JSON.stringify(parameters ?? [])],
        ),
      );
      return reply.status(201).send({ name, title, description, parameters: parameters ?? [] });
    },
  );

  typed.get('/api/admin/context', { onRequest: guard }, async function adminListContextFields() {
    return db.query(
      `SELECT name, description, stickiness, sort_order AS "sortOrder", legal_values AS "legalValues"
         FROM context_fields ORDER BY sort_order, name`,
    );
  });

  typed.delete(
    '/api/admin/projects/:project/features/:feature',
    {
      schema: {
        params: {
          type: 'object',
          required: ['project', 'feature'],
          properties: { project: { type: 'string' }, feature: { type: 'string' } },
        },
      },
      onRequest: guard,
    },
    async function adminArchiveFeature(request, reply) {
      const { project, feature } = request.params;
      const rows = await write((tx) =>
        tx.query(
          `UPDATE features SET archived_at = now()
            WHERE name = $1 AND project = $2 AND archived_at IS NULL RETURNING name`,
          [feature, project],
        ),
      );
      if (rows.length === 0) {
        throw new ApiError(
          'NOT_FOUND',
          `There is no active feature "${feature}" in project "${project}".`,
        );
      }
      return reply.status(202).send();
    },
  );
}
