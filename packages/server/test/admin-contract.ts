import assert from 'node:assert/strict';
import type { FastifyInstance, InjectOptions } from 'fastify';
import type { Database } from '../src/db/database.js';
import { admin, dump } from './helpers.js';

/** An event of the log as `GET /api/admin/search/events` answers it. */
export interface LoggedEvent {
  id: number;
  type: string;
  createdBy: string;
  project: string | null;
  environment: string | null;
  featureName: string | null;
  data: Record<string, unknown> | null;
  preData: Record<string, unknown> | null;
  tags: { type: string; value: string }[];
}

/** Requests with the admin token, the event log, and "refused with nothing changed". */
export function adminContract(app: () => FastifyInstance, db: () => Database) {
  const call = (method: InjectOptions['method'], url: string, payload?: unknown) =>
    app().inject({
      method,
      url,
      headers: admin,
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
  const events = async (type: string): Promise<LoggedEvent[]> =>
    (await call('GET', `/api/admin/search/events?type=${type}&limit=1000`)).json().events;
  /** Runs `request`, checks a 4xx of `status` in the error shape, and that nothing changed. */
  const refused = async (
    status: number,
    request: () => Promise<{ statusCode: number; body: string }>,
  ): Promise<{ name: string; message: string; details: { message: string }[] }> => {
    const before = await dump(db());
    const response = await request();
    assert.equal(response.statusCode, status, response.body);
    const body = JSON.parse(response.body);
    assert.equal(typeof body.name, 'string');
    assert.equal(typeof body.message, 'string');
    assert.ok(Array.isArray(body.details));
    assert.deepEqual(await dump(db()), before, 'nothing changed');
    return body;
  };
  const configRevision = async () =>
    (await db().query<{ config: number }>('SELECT config::int AS config FROM revision'))[0]!.config;
  return { call, events, refused, configRevision };
}
