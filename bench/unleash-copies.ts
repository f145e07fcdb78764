// Grows an unleash-server 8.2 instance in its own database: copies of flags it imported, under new
// names, with every row its import wrote for them (environments with their variants, strategies
// with their segments, tags, dependencies, lifecycle). unleash-server's import spends about 35 ms
// of its CPU a flag and environment, so 5,000 flags × 2 environments would take longer to load
// than the copy does to measure; unleash-server reads the copied rows as it reads its own.
// No events are written for them: call the harness's `settle` after, which refreshes its caches.
import pg from 'pg';

/** `<name>-copy<k>`: the flags copy k of `names` makes. */
export function copyName(name: string, k: number): string {
  return `${name}-copy${k}`;
}

/**
 * Adds `count` flags to the unleash-server database at `databaseUrl`: copy 1 of every flag of
 * `names` (in order), then copy 2, and so on. A copied child depends on its parent's copy of the
 * same round (dropped when that parent is not copied).
 */
export async function copyFlags(
  databaseUrl: string,
  names: readonly string[],
  count: number,
): Promise<void> {
  const copies = Array.from({ length: count }, (_, index) => ({
    original: names[index % names.length]!,
    round: Math.floor(index / names.length) + 1,
  }));
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('BEGIN');
    await client.query(
      'CREATE TEMP TABLE copy_names (original text, copy text, round int) ON COMMIT DROP',
    );
    await client.query(
      `INSERT INTO copy_names SELECT original, copy, round
         FROM unnest($1::text[], $2::text[], $3::int[]) AS t(original, copy, round)`,
      [
        copies.map((entry) => entry.original),
        copies.map((entry) => copyName(entry.original, entry.round)),
        copies.map((entry) => entry.round),
      ],
    );
    await client.query(
      `INSERT INTO features (created_at, name, description, variants, type, stale, project,
         last_seen_at, impression_data, archived_at, potentially_stale, created_by_user_id, archived)
       SELECT f.created_at, c.copy, f.description, f.variants, f.type, f.stale, f.project,
         f.last_seen_at, f.impression_data, f.archived_at, f.potentially_stale, f.created_by_user_id,
         f.archived
         FROM features f JOIN copy_names c ON c.original = f.name`,
    );
    await client.query(
      `INSERT INTO feature_environments (environment, feature_name, enabled, variants, last_seen_at)
       SELECT e.environment, c.copy, e.enabled, e.variants, e.last_seen_at
         FROM feature_environments e JOIN copy_names c ON c.original = e.feature_name`,
    );
    await client.query(
      `CREATE TEMP TABLE copy_strategies ON COMMIT DROP AS
       SELECT s.id AS original, gen_random_uuid()::text AS copy, c.copy AS feature_name
         FROM feature_strategies s JOIN copy_names c ON c.original = s.feature_name`,
    );
    await client.query(
      `INSERT INTO feature_strategies (id, feature_name, project_name, environment, strategy_name,
         parameters, constraints, sort_order, created_at, title, disabled, variants,
         created_by_user_id, milestone_id)
       SELECT i.copy, i.feature_name, s.project_name, s.environment, s.strategy_name, s.parameters,
         s.constraints, s.sort_order, s.created_at, s.title, s.disabled, s.variants,
         s.created_by_user_id, s.milestone_id
         FROM feature_strategies s JOIN copy_strategies i ON i.original = s.id`,
    );
    await client.query(
      `INSERT INTO feature_strategy_segment (feature_strategy_id, segment_id, created_at)
       SELECT i.copy, g.segment_id, g.created_at
         FROM feature_strategy_segment g JOIN copy_strategies i ON i.original = g.feature_strategy_id`,
    );
    await client.query(
      `INSERT INTO feature_tag (feature_name, tag_type, tag_value, created_at, created_by_user_id)
       SELECT c.copy, t.tag_type, t.tag_value, t.created_at, t.created_by_user_id
         FROM feature_tag t JOIN copy_names c ON c.original = t.feature_name`,
    );
    await client.query(
      `INSERT INTO dependent_features (parent, child, enabled, variants)
       SELECT p.copy, c.copy, d.enabled, d.variants
         FROM dependent_features d
         JOIN copy_names c ON c.original = d.child
         JOIN copy_names p ON p.original = d.parent AND p.round = c.round`,
    );
    await client.query(
      `INSERT INTO feature_lifecycles (feature, stage, status, status_value, created_at)
       SELECT c.copy, l.stage, l.status, l.status_value, l.created_at
         FROM feature_lifecycles l JOIN copy_names c ON c.original = l.feature`,
    );
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  } finally {
    await client.end();
  }
}
