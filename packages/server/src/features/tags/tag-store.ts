import type { Queryable } from '../../db/database.js';
import { ApiError } from '../../errors.js';

export interface TagType {
  name: string;
  description: string | null;
  icon: string | null;
  color: string | null;
}

export interface Tag {
  type: string;
  value: string;
}

export async function listTagTypes(db: Queryable): Promise<TagType[]> {
  return db.query<TagType>('SELECT name, description, icon, color FROM tag_types ORDER BY name');
}

export async function findTagType(db: Queryable, name: string): Promise<TagType | undefined> {
  const rows = await db.query<TagType>(
    'SELECT name, description, icon, color FROM tag_types WHERE name = $1',
    [name],
  );
  return rows[0];
}

/** 400 unless every tag's type exists (a tag names its type in the body). */
export async function requireTagTypes(db: Queryable, tags: readonly Tag[]): Promise<void> {
  const wanted = [...new Set(tags.map((tag) => tag.type))];
  if (wanted.length === 0) return;
  const rows = await db.query<{ name: string }>(
    'SELECT name FROM tag_types WHERE name IN (SELECT jsonb_array_elements_text($1::jsonb))',
    [JSON.stringify(wanted)],
  );
  const known = new Set(rows.map((row) => row.name));
  const missing = wanted.filter((type) => !known.has(type));
  if (missing.length > 0) {
    throw new ApiError(
      'BAD_DATA',
      `Tag type ${missing.map((type) => `'${type}'`).join(', ')} does not exist.`,
    );
  }
}

/**
 * Every tag: those created on their own and those flags carry (an import tags flags without
 * creating tags first), by type and value; of one type when `type` is given.
 */
export async function listTags(db: Queryable, type?: string): Promise<Tag[]> {
  return db.query<Tag>(
    `SELECT type, value FROM (
       SELECT type, value FROM tags
       UNION SELECT tag_type, tag_value FROM feature_tags) t
      WHERE $1::text IS NULL OR type = $1
      ORDER BY type, value`,
    [type ?? null],
  );
}

export async function tagExists(db: Queryable, tag: Tag): Promise<boolean> {
  const rows = await db.query(
    `SELECT 1 FROM tags WHERE type = $1 AND value = $2
     UNION ALL SELECT 1 FROM feature_tags WHERE tag_type = $1 AND tag_value = $2 LIMIT 1`,
    [tag.type, tag.value],
  );
  return rows.length > 0;
}

/** A flag's tags with their type's colour, as `GET /api/admin/features/:feature/tags` lists them. */
export async function tagsOfFeature(
  db: Queryable,
  feature: string,
): Promise<(Tag & { color: string | null })[]> {
  return db.query(
    `SELECT t.tag_type AS type, t.tag_value AS value, tt.color
       FROM feature_tags t JOIN tag_types tt ON tt.name = t.tag_type
      WHERE t.feature_name = $1 ORDER BY t.created_at, t.tag_type, t.tag_value`,
    [feature],
  );
}

/** The flag (any state), locked for the transaction; 404 when there is none. */
export async function lockFeature(
  tx: Queryable,
  feature: string,
): Promise<{ name: string; project: string }> {
  const rows = await tx.query<{ name: string; project: string }>(
    'SELECT name, project FROM features WHERE name = $1 FOR UPDATE',
    [feature],
  );
  if (!rows[0]) throw new ApiError('NOT_FOUND', `Could not find feature with name ${feature}.`);
  return rows[0];
}

/** Tags the flag; true when the tag was new on it. The tag exists from then on. */
export async function addFeatureTag(tx: Queryable, feature: string, tag: Tag): Promise<boolean> {
  await tx.query('INSERT INTO tags (type, value) VALUES ($1, $2) ON CONFLICT DO NOTHING', [
    tag.type,
    tag.value,
  ]);
  const added = await tx.query(
    `INSERT INTO feature_tags (feature_name, tag_type, tag_value) VALUES ($1, $2, $3)
     ON CONFLICT DO NOTHING RETURNING 1`,
    [feature, tag.type, tag.value],
  );
  return added.length > 0;
}

/** Untags the flag; true when it carried the tag. */
export async function removeFeatureTag(tx: Queryable, feature: string, tag: Tag): Promise<boolean> {
  const removed = await tx.query(
    `DELETE FROM feature_tags WHERE feature_name = $1 AND tag_type = $2 AND tag_value = $3
     RETURNING 1`,
    [feature, tag.type, tag.value],
  );
  return removed.length > 0;
}

/** The flags (any state) carrying a tag of `type`, or this exact tag when `value` is given. */
export async function featuresTagged(
  db: Queryable,
  type: string,
  value?: string,
): Promise<{ name: string; project: string }[]> {
  return db.query(
    `SELECT DISTINCT f.name, f.project FROM feature_tags t JOIN features f ON f.name = t.feature_name
      WHERE t.tag_type = $1 AND ($2::text IS NULL OR t.tag_value = $2) ORDER BY f.name`,
    [type, value ?? null],
  );
}
