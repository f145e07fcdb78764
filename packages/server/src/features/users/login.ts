import type { User } from '@flags/schemas';
import type { Queryable } from '../../db/database.js';
import { needsRehash, type PasswordHasher } from './password.js';
import { getUsers } from './user-store.js';

/**
 * The password check of a login: `login` is a username or an email (any case; a username match
 * wins). Returns the user when the password is right, else undefined. A hash made with older
 * scrypt parameters is rewritten with the current ones on success (only the moment the password
 * is known allows that). flags-server has no login route or sessions yet: this is what one calls.
 */
export async function logIn(
  db: Queryable,
  passwords: PasswordHasher,
  login: string,
  password: string,
): Promise<User | undefined> {
  const [row] = await db.query<{ id: number; password_hash: string | null }>(
    `SELECT id, password_hash FROM users
      WHERE deleted_at IS NULL AND (lower(username) = lower($1) OR lower(email) = lower($1))
      ORDER BY (lower(username) = lower($1)) DESC NULLS LAST, id
      LIMIT 1`,
    [login],
  );
  // Unknown users and users without a password cost a hash too: timing does not tell them apart.
  if (!(await passwords.verify(password, row?.password_hash ?? null)) || !row?.password_hash) {
    return undefined;
  }
  if (needsRehash(row.password_hash)) {
    const upgraded = await passwords.hash(password);
    // Only if nobody changed the hash meanwhile.
    await db.query('UPDATE users SET password_hash = $2 WHERE id = $1 AND password_hash = $3', [
      row.id,
      upgraded,
      row.password_hash,
    ]);
  }
  const [user] = await getUsers(db, [row.id]);
  return user;
}
