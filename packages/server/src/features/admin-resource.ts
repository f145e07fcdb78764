import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type Actor, actorOf, type Permission } from '../auth/actor.js';
import type { Database, Queryable, Transaction } from '../db/database.js';
import type { ApiError } from '../errors.js';
import type { RevisionTracker } from '../revision.js';
import { type ConfigWriteScope, refuseDuplicate, writeConfig } from './config-write.js';
import { type NewEvent, recordEvent } from './events/event-store.js';
import type { EventType } from './events/event-types.js';
import { refuseWhileUsed } from './in-use.js';

/** What every admin route of a resource is registered with. */
export interface AdminRouteDeps {
  readonly app: FastifyInstance;
  readonly db: Database;
  readonly revisions: RevisionTracker;
  readonly guard: (request: FastifyRequest) => Promise<void>;
}

/** The answer of a write: a status and, unless it is bodiless, a body. */
export interface Answer {
  readonly status: 200 | 201 | 204;
  readonly body?: unknown;
}

/**
 * One admin resource (context fields, tag types, segments, projects, environments): its paths,
 * the permission its writes need, the events they record and what keeps one from being deleted,
 * declared once; `adminResource` registers list, read, create, update and delete from it. Each
 * write is one config write (`writeConfig`) that records its event in the same transaction.
 */
export interface AdminResource<T, Key extends string | number, CreateBody, UpdateBody> {
  /** The collection's path, e.g. `/api/admin/context`; one item is `${path}/:${key.param}`. */
  readonly path: string;
  /** The URL parameter naming one item, and its schema. */
  readonly key: { readonly param: string; readonly schema: object };
  /** The permission the writes need; without it, the method's default (an Admin's). */
  readonly permission?: Permission;
  /**
   * Whether SDKs are served the resource: then every write diffs every flag; otherwise none
   * (its writes change nothing the client API serves).
   */
  readonly served: boolean;
  readonly events: {
    readonly created: EventType;
    readonly updated: EventType;
    readonly deleted: EventType;
  };
  /** The event's project and environment fields, from the item. */
  eventScope?(item: T): Pick<NewEvent, 'project' | 'environment'>;
  /** The 404 of a key that names nothing (`reading`: for `GET path/:key`, else for a write). */
  notFound(key: Key, reading: boolean): ApiError;
  /** The item `key` names; `lock`: also locked for the rest of the transaction. */
  find(db: Queryable, key: Key, lock: boolean): Promise<T | undefined>;
  /** `GET path`: the answer. */
  list(db: Queryable): Promise<unknown>;
  /** `GET path/:key`: the answer for a found item (default: the item). */
  read?(db: Queryable, item: T): Promise<unknown> | unknown;
  readonly create?: {
    /** The body's JSON schema (`CreateBody` is its type: `FromSchema<typeof schema>`). */
    readonly body: object;
    /** Wraps the write to turn a unique violation into a 409 (`refuseDuplicate`). */
    duplicate?(body: CreateBody): string;
    /** Checks and inserts the item; returns what was created (the event's data). */
    insert(tx: Transaction, body: CreateBody): Promise<T>;
    answer(item: T, body: CreateBody): unknown;
  };
  readonly update?: {
    /** The item's path under `path` (default `/:key`). */
    readonly path?: string;
    /** The body's JSON schema (`UpdateBody` is its type). */
    readonly body: object;
    /** Overrides `served` for updates (a project's name is not served, the project is). */
    readonly served?: boolean;
    /** Wraps the write to turn a unique violation into a 409 (`refuseDuplicate`). */
    duplicate?(body: UpdateBody): string;
    /** Refuses a body before anything is read (e.g. a rename). */
    check?(key: Key, body: UpdateBody): void;
    /** The item's new state, from the old one and the body; may read and refuse. */
    change(tx: Transaction, before: T, body: UpdateBody): Promise<T> | T;
    save(tx: Transaction, after: T): Promise<void>;
    answer(after: T): Answer;
  };
  readonly remove: {
    /** Refuses deleting the key whatever it names (e.g. the default project). */
    check?(key: Key): void;
    /** What uses the item, one phrase each; the 409 names them. */
    usedBy(tx: Transaction, item: T): Promise<string[]>;
    /** `Context field "region"`: the subject of the 409's message. */
    what(item: T, key: Key): string;
    /** What to do first, said after the users. */
    readonly remedy: string;
    /** The table and key column the item's row is deleted from (names from code, never input). */
    readonly table: string;
    readonly column: string;
    readonly status: 200 | 204;
  };
}

const send = (reply: FastifyReply, answer: Answer) =>
  answer.body === undefined
    ? reply.status(answer.status).send()
    : reply.status(answer.status).send(answer.body);

/** What `adminResource` gives back for the resource's other routes. */
export interface ResourceWrites<T, Key> {
  /**
   * Changes one item as an update does (locked, 404 when missing, `updated` recorded), with the
   * new state from `next` and `save` writing it: for routes beside the five (legal values,
   * turning an environment on).
   */
  change(
    actor: Actor,
    key: Key,
    next: (tx: Transaction, before: T) => Promise<T> | T,
    save: (tx: Transaction, after: T) => Promise<void>,
  ): Promise<T>;
}

/** Registers the list, read, create, update and delete routes `resource` declares. */
export function adminResource<T, Key extends string | number, CreateBody, UpdateBody>(
  deps: AdminRouteDeps,
  resource: AdminResource<T, Key, CreateBody, UpdateBody>,
): ResourceWrites<T, Key> {
  const { app, db, revisions, guard } = deps;
  const param = resource.key.param;
  const params = {
    type: 'object',
    required: [param],
    properties: { [param]: resource.key.schema },
  } as const;
  const itemPath = `${resource.path}/:${param}`;
  const config =
    resource.permission === undefined ? {} : { config: { permission: resource.permission } };
  const keyOf = (request: FastifyRequest) => (request.params as Record<string, Key>)[param]!;

  /** One write: the scope the resource's kind asks for, its event recorded with it. */
  const write = <R>(
    actor: Actor,
    change: (tx: Transaction, record: (event: Omit<NewEvent, 'by'>) => void) => Promise<R>,
    served = resource.served,
  ) =>
    writeConfig(db, revisions, async (tx, scope: ConfigWriteScope) => {
      if (!served) scope.flags();
      return change(tx, (event) => recordEvent(tx, { ...event, by: actor }));
    });
  const scopeOf = (item: T) => resource.eventScope?.(item) ?? {};
  const found = async (q: Queryable, key: Key, lock: boolean) => {
    const item = await resource.find(q, key, lock);
    if (item === undefined) throw resource.notFound(key, !lock);
    return item;
  };

  /** Changes one item: locked, given its new state by `next`, saved, `updated` recorded. */
  const change = (
    actor: Actor,
    key: Key,
    next: (tx: Transaction, before: T) => Promise<T> | T,
    save: (tx: Transaction, after: T) => Promise<void>,
    served = resource.served,
  ) =>
    write(
      actor,
      async (tx, record) => {
        const before = await found(tx, key, true);
        const after = await next(tx, before);
        await save(tx, after);
        record({
          type: resource.events.updated,
          ...scopeOf(after),
          data: after,
          preData: before,
        });
        return after;
      },
      served,
    );

  app.route({
    method: 'GET',
    url: resource.path,
    onRequest: guard,
    handler: async () => resource.list(db),
  });

  app.route({
    method: 'GET',
    url: itemPath,
    schema: { params },
    onRequest: guard,
    handler: async (request) => {
      const item = await found(db, keyOf(request), false);
      return resource.read ? resource.read(db, item) : item;
    },
  });

  const create = resource.create;
  if (create) {
    app.route({
      method: 'POST',
      url: resource.path,
      schema: { body: create.body },
      onRequest: guard,
      ...config,
      handler: async (request, reply) => {
        // Validated against `create.body` by the route's schema.
        const body = request.body as never;
        const actor = actorOf(request);
        const insert = () =>
          write(actor, async (tx, record) => {
            const item = await create.insert(tx, body);
            record({ type: resource.events.created, ...scopeOf(item), data: item });
            return item;
          });
        const item = await (create.duplicate
          ? refuseDuplicate(create.duplicate(body), insert)
          : insert());
        return reply.status(201).send(create.answer(item, body));
      },
    });
  }

  const update = resource.update;
  if (update) {
    app.route({
      method: 'PUT',
      url: `${resource.path}${update.path ?? `/:${param}`}`,
      schema: { params, body: update.body },
      onRequest: guard,
      ...config,
      handler: async (request, reply) => {
        const key = keyOf(request);
        // Validated against `update.body` by the route's schema.
        const body = request.body as never;
        update.check?.(key, body);
        const write = () =>
          change(
            actorOf(request),
            key,
            (tx, before) => update.change(tx, before, body),
            update.save,
            update.served,
          );
        const after = await (update.duplicate
          ? refuseDuplicate(update.duplicate(body), write)
          : write());
        return send(reply, update.answer(after));
      },
    });
  }

  const remove = resource.remove;
  app.route({
    method: 'DELETE',
    url: itemPath,
    schema: { params },
    onRequest: guard,
    ...config,
    handler: async (request, reply) => {
      const key = keyOf(request);
      remove.check?.(key);
      await write(actorOf(request), async (tx, record) => {
        const before = await found(tx, key, true);
        refuseWhileUsed(remove.what(before, key), await remove.usedBy(tx, before), remove.remedy);
        await tx.query(`DELETE FROM ${remove.table} WHERE ${remove.column} = $1`, [key]);
        record({ type: resource.events.deleted, ...scopeOf(before), preData: before });
      });
      return reply.status(remove.status).send();
    },
  });

  return { change: (actor, key, next, save) => change(actor, key, next, save) };
}
