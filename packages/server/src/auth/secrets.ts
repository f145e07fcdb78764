import { createHash } from 'node:crypto';

/**
 * What the database keeps of a secret (API tokens, signup links): the hex SHA-256 of its UTF-8
 * bytes. The secrets are random (or configured by the operator), so a plain hash is enough; a
 * keyed hash would need a server key to manage, and migration 12 computes the same value in SQL
 * (`encode(sha256(convert_to(secret, 'UTF8')), 'hex')`) to convert the rows stored before it.
 */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** The largest `serial` (PostgreSQL `integer`). */
const MAX_ID = 2_147_483_647;

/**
 * Admin routes name a token by its secret (as Unleash does) or by its `id`, since the secret is
 * shown only once: the id `key` spells, if it spells one. A secret that matches wins over an id.
 */
export function idFromKey(key: string): number | undefined {
  if (!/^[1-9][0-9]{0,9}$/.test(key)) return undefined;
  const id = Number(key);
  return id <= MAX_ID ? id : undefined;
}
