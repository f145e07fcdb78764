/**
 * The keys of the advisory locks that server processes sharing one PostgreSQL take, one per job:
 * a key used by two jobs makes each wait for, or skip because of, the other. Arbitrary constants.
 */
export const ADVISORY_LOCK_KEYS = {
  /** Migrations, one server at a time. */
  migration: 7_314_221,
  /** The insights snapshot: one server takes it per run. */
  insightsSnapshot: 7_314_222,
  /** Imports into one schema run one after the other. */
  import: 7_314_223,
  /** Retention deletes: one server cleans up per batch. */
  retention: 7_314_224,
  /** The client change log: one write at a time diffs and appends, so event ids follow commit order. */
  clientChangeLog: 7_314_225,
} as const;
