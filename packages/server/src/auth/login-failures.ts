import { addressShare } from '@flags/serving';
import type { Queryable } from '../db/database.js';

/** How failed logins are throttled (`LOGIN_*` options). */
export interface LoginLimits {
  /** Failures of one user from one address before each further try there waits. */
  readonly failuresPerUserAndAddress: number;
  /** Failures from one address, for any users, before each further try from it waits. */
  readonly failuresPerAddress: number;
  /**
   * Failures of one user from every address after which each address that has failed for that
   * user waits after every further failure; addresses that have not are never held up by it.
   */
  readonly failuresPerUser: number;
  /** The first wait; each further failure doubles it. */
  readonly delayMs: number;
  readonly maxDelayMs: number;
  /** A counter with no failure for this long starts again from zero (and its row is deleted). */
  readonly forgetAfterMs: number;
}

/** What a login's failures count towards: a user (or a typed name) and an address share. */
export interface LoginSubject {
  /** `id:<user id>`, or `name:<typed name, trimmed and lowercased>` when it names nobody. */
  readonly user: string;
  /** The client address, IPv6 by /64 and IPv4-mapped IPv6 as IPv4 (`addressShare`). */
  readonly address: string;
}

/**
 * The subject of a login: aliases of one user (username, email, any case) count as one, and a
 * name nobody has counts like a user's, so the throttle answers alike for both.
 */
export function loginSubject(
  userId: number | undefined,
  typedName: string,
  address: string,
): LoginSubject {
  return {
    user: userId === undefined ? `name:${typedName.trim().toLowerCase()}` : `id:${userId}`,
    // A request always has one; an empty one would clash with the per-user counter's key.
    address: addressShare(address) || 'unknown',
  };
}

interface CounterRow {
  user_key: string;
  address: string;
  failures: number;
  last_failure_at: Date | string;
}

/**
 * Failed logins, counted in the database (table `login_failures`) so every server on it
 * throttles alike, with delays that grow (OWASP's Authentication and Credential Stuffing cheat
 * sheets): per user and address, `failuresPerUserAndAddress` failures, then each further try
 * waits `delayMs`, doubled per failure up to `maxDelayMs`; per address, the same beyond
 * `failuresPerAddress` (credential stuffing tries many users from one address). Per user, from
 * every address, the count only slows: beyond `failuresPerUser`, an address that has failed for
 * the user waits after each of its failures, while an address without failures for the user is
 * never held up, so no stranger can lock the user out. A success clears its user and address's
 * counter. One per app.
 */
export class LoginFailures {
  constructor(
    private readonly db: Queryable,
    private readonly limits: LoginLimits,
    private readonly now: () => Date,
  ) {}

  /** How long `subject` must wait before its next try, ms; 0: it may try now. */
  async retryAfterMs(subject: LoginSubject): Promise<number> {
    const at = this.now().getTime();
    const rows = await this.db.query<CounterRow>(
      `SELECT user_key, address, failures, last_failure_at FROM login_failures
        WHERE last_failure_at > $3
          AND ((user_key = $1 AND address IN ($2, '')) OR (user_key = '' AND address = $2))`,
      [subject.user, subject.address, new Date(at - this.limits.forgetAfterMs)],
    );
    const counter = (user: string, address: string) =>
      rows.find((row) => row.user_key === user && row.address === address);
    const pair = counter(subject.user, subject.address);
    const ofUser = counter(subject.user, '');
    const ofAddress = counter('', subject.address);
    const { failuresPerUserAndAddress, failuresPerUser, failuresPerAddress } = this.limits;
    // Once the user is under attack, an address that has failed for them waits after each failure;
    // one that has not (a pair counter below 1) still passes.
    const allowed = (ofUser?.failures ?? 0) >= failuresPerUser ? 1 : failuresPerUserAndAddress;
    const until = Math.max(
      this.waitUntil(pair, allowed),
      this.waitUntil(ofAddress, failuresPerAddress),
    );
    return Math.max(0, until - at);
  }

  /**
   * Counts a failed login of `subject` in its three counters, in one statement: all of them or,
   * should the write fail, none. Counters quiet for `forgetAfterMs` start again from one; rows
   * quieter still are deleted here rather than by a job.
   */
  async recordFailure(subject: LoginSubject): Promise<void> {
    const at = this.now();
    const forgotten = new Date(at.getTime() - this.limits.forgetAfterMs);
    await this.db.query(
      `INSERT INTO login_failures AS f (user_key, address, failures, last_failure_at)
       VALUES ($1, $2, 1, $3), ($1, '', 1, $3), ('', $2, 1, $3)
       ON CONFLICT (user_key, address) DO UPDATE
         SET failures = CASE WHEN f.last_failure_at <= $4 THEN 1 ELSE f.failures + 1 END,
             last_failure_at = $3`,
      [subject.user, subject.address, at, forgotten],
    );
    await this.db.query('DELETE FROM login_failures WHERE last_failure_at <= $1', [forgotten]);
  }

  /** Clears the counter of `subject`'s user at its address (the others go on counting). */
  async recordSuccess(subject: LoginSubject): Promise<void> {
    await this.db.query('DELETE FROM login_failures WHERE user_key = $1 AND address = $2', [
      subject.user,
      subject.address,
    ]);
  }

  /** When a counter's wait ends (ms since the epoch): `allowed` failures wait nothing. */
  private waitUntil(row: CounterRow | undefined, allowed: number): number {
    if (row === undefined || row.failures < allowed) return 0;
    const doublings = Math.min(row.failures - allowed, 40);
    const delayMs = Math.min(this.limits.maxDelayMs, this.limits.delayMs * 2 ** doublings);
    return new Date(row.last_failure_at).getTime() + delayMs;
  }
}
