import type { User } from '@flags/schemas';
import type { Queryable } from '../../db/database.js';
import { needsRehash, type PasswordHasher } from './password.js';
import { getUsers } from './user-store.js';

/** The user a login names, and the hash to check its password against. */
export interface LoginCandidate {
  readonly id: number;
  readonly passwordHash: string | null;
}

/**
 * The user whose username or email (any case, around spaces ignored; a username match wins) is
 * `login`, if any.
 */
export async function findLoginCandidate(
  db: Queryable,
  login: string,
): Promise<LoginCandidate | undefined> {
  const [row] = await db.query<{ id: number; password_hash: string | null }>(
    `SELECT id, password_hash FROM users
      WHERE deleted_at IS NULL AND disabled_at IS NULL AND (lower(username) = lower($1) OR lower(email) = lower($1))
      ORDER BY (lower(username) = lower($1)) DESC NULLS LAST, id
      LIMIT 1`,
    [login.trim()],
  );
  return row && { id: row.id, passwordHash: row.password_hash };
}

/**
 * The password check of a login (`findLoginCandidate`'s user, or none) from the client at
 * `address`: returns the user when the password is right, else undefined. A hash made with older
 * scrypt parameters is rewritten with the current ones on success (only the moment the password
 * is known allows that).
 */
export async function checkLogin(
  db: Queryable,
  passwords: PasswordHasher,
  candidate: LoginCandidate | undefined,
  password: string,
  address: string,
): Promise<User | undefined> {
  const stored = candidate?.passwordHash ?? null;
  // Unknown users and users without a password cost a hash too: timing does not tell them apart.
  if (!(await passwords.verify(password, stored, address)) || !candidate || stored === null) {
    return undefined;
  }
  if (needsRehash(stored)) {
    const upgraded = await passwords.hash(password, address);
    // Only if nobody changed the hash meanwhile.
    await db.query('UPDATE users SET password_hash = $2 WHERE id = $1 AND password_hash = $3', [
      candidate.id,
      upgraded,
      stored,
    ]);
  }
  const [user] = await getUsers(db, [candidate.id]);
  return user;
}
