import { randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from 'node:crypto';
import { addressShare } from '@flags/serving';
import bcrypt from 'bcryptjs';
import { FairLimit, LimitFullError } from '../../concurrency-limit.js';
import { ApiError } from '../../errors.js';

interface ScryptCost {
  readonly N: number;
  readonly r: number;
  readonly p: number;
}

/**
 * What new hashes cost: OWASP's scrypt minimum for passwords (N=2^17, r=8, p=1), 128 MiB of
 * memory each. Hashes made with other parameters (N=2^14 before) still verify, since the
 * parameters travel with each hash, and are rewritten with these at the next successful login.
 */
export const PASSWORD_COST: ScryptCost = { N: 2 ** 17, r: 8, p: 1 };

/** scrypt needs 128·N·r bytes (128 MiB now); OpenSSL refuses beyond `maxmem`, so leave headroom. */
const MAX_MEMORY_BYTES = 192 * 1024 * 1024;
const KEY_BYTES = 32;

function derive(password: string, salt: Buffer, keyBytes: number, cost: ScryptCost) {
  const options: ScryptOptions = { ...cost, maxmem: MAX_MEMORY_BYTES };
  return new Promise<Buffer>((resolve, reject) => {
    scrypt(password, salt, keyBytes, options, (error, key) =>
      error ? reject(error) : resolve(key),
    );
  });
}

/** `scrypt$N$r$p$<salt base64url>$<key base64url>`: the parameters travel with the hash. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, KEY_BYTES, PASSWORD_COST);
  const { N, r, p } = PASSWORD_COST;
  return `scrypt$${N}$${r}$${p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

function parseHash(stored: string) {
  const [scheme, n, r, p, salt, key] = stored.split('$');
  const cost = { N: Number(n), r: Number(r), p: Number(p) };
  if (scheme !== 'scrypt' || !salt || !key) return undefined;
  if (![cost.N, cost.r, cost.p].every((value) => Number.isSafeInteger(value) && value > 0)) {
    return undefined;
  }
  return { cost, salt: Buffer.from(salt, 'base64url'), key: Buffer.from(key, 'base64url') };
}

/**
 * unleash-server's hashes (`$2a$`, `$2b$`, `$2y$` and their cost, then 53 characters of salt and
 * hash), which `flags-server migrate from-unleash --database` copies: they verify as they are
 * and are rewritten with scrypt at the next successful login (`needsRehash`).
 */
const BCRYPT_HASH = /^\$2[aby]\$\d{2}\$[./A-Za-z0-9]{53}$/;

/**
 * Constant-time check of `password` against a `hashPassword` result (of any parameters) or a
 * bcrypt hash copied from unleash-server.
 */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  if (BCRYPT_HASH.test(stored)) {
    // bcrypt reads only the first 72 bytes of a password, as unleash-server checked it.
    return bcrypt.compare(password, stored).catch(() => false);
  }
  const parsed = parseHash(stored);
  if (!parsed || parsed.key.length === 0) return false;
  // Parameters scrypt refuses (a damaged row) make a hash that matches nothing.
  const actual = await derive(password, parsed.salt, parsed.key.length, parsed.cost).catch(
    () => undefined,
  );
  return actual !== undefined && timingSafeEqual(actual, parsed.key);
}

/** Whether a stored hash was made with other parameters than new hashes get. */
export function needsRehash(stored: string): boolean {
  const cost = parseHash(stored)?.cost;
  return (
    !cost || cost.N !== PASSWORD_COST.N || cost.r !== PASSWORD_COST.r || cost.p !== PASSWORD_COST.p
  );
}

/** The queue of hashing that no client address is given for: admins' and signed-in users' work. */
const SIGNED_IN = 'signed-in';

/**
 * Password hashing with a bound, queued fairly per client address: each hash takes 128 MiB and a
 * thread-pool thread for a good fraction of a second, and public routes (login, signup) hash on
 * request, so unbounded concurrency would let anyone exhaust memory, and one queue in arrival
 * order would let a flood from a few addresses make everyone else's login fail. At most 2 run at
 * once (256 MiB); the rest wait, addresses (IPv6 by /64) taking turns (`FairLimit`), up to 4 per
 * address and 64 in all; beyond, that address's request gets a 503 rather than queueing without
 * end. One per app.
 */
export class PasswordHasher {
  readonly limit = new FairLimit({ maxActive: 2, maxWaitingPerKey: 4, maxWaiting: 64 });
  /** A hash to check against when a login names nobody, so both cases cost the same. */
  private decoy: Promise<string> | undefined;

  /**
   * Hashes `password` for the client at `address` (`request.ip`); without one, in the queue of
   * signed-in callers' work.
   */
  hash(password: string, address?: string): Promise<string> {
    return this.bounded(address, () => hashPassword(password));
  }

  /** Checks `password` against `stored` (none: against a decoy, and false) for `address`. */
  verify(password: string, stored: string | null, address?: string): Promise<boolean> {
    return this.bounded(address, async () => {
      if (stored !== null) return verifyPassword(password, stored);
      this.decoy ??= hashPassword(randomBytes(16).toString('hex'));
      await verifyPassword(password, await this.decoy);
      return false;
    });
  }

  private async bounded<T>(address: string | undefined, task: () => Promise<T>): Promise<T> {
    try {
      return await this.limit.run(address === undefined ? SIGNED_IN : addressShare(address), task);
    } catch (error) {
      if (!(error instanceof LimitFullError)) throw error;
      throw error.scope === 'key'
        ? new ApiError(
            'PASSWORD_HASHING_BUSY',
            'Too many password checks from this address are waiting; retry once they are answered, in a few seconds.',
          )
        : new ApiError('PASSWORD_HASHING_BUSY');
    }
  }
}
