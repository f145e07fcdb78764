import type { Database, Queryable } from '../db/database.js';
import { ApiError } from '../errors.js';
import { bumpConfigRevision, type RevisionTracker } from '../revision.js';

/** The id of a project, environment or custom strategy: it appears in URL paths as it stands. */
export const idSchema = {
  type: 'string',
  minLength: 1,
  maxLength: 100,
  pattern: '^[A-Za-z0-9_.~-]+$',
} as const;

/**
 * A write to what the client API serves: `write` and the config revision bump commit together
 * (or neither does), and this process serves the change from its next request on.
 */
export async function writeConfig<T>(
  db: Database,
  revisions: RevisionTracker,
  write: (tx: Queryable) => Promise<T>,
): Promise<T> {
  const result = await db.transaction(async (tx) => {
    const value = await write(tx);
    await bumpConfigRevision(tx);
    return value;
  });
  revisions.invalidate();
  return result;
}

/** Runs `create`; a PostgreSQL unique violation (23505) becomes a 409 naming `what`. */
export async function refuseDuplicate<T>(what: string, create: () => Promise<T>): Promise<T> {
  try {
    return await create();
  } catch (error) {
    if ((error as { code?: string }).code === '23505') {
      throw new ApiError('NAME_EXISTS', `${what} already exists.`);
    }
    throw error;
  }
}
