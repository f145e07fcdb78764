import type { Queryable } from '../../db/database.js';

/** Instance settings Admins change through the admin API, and their values when never set. */
export interface Settings {
  /** The longest a new personal access token may live, in days; null: no limit. */
  readonly personalAccessTokens: { readonly maxLifetimeDays: number | null };
}

export const DEFAULT_SETTINGS: Settings = {
  personalAccessTokens: { maxLifetimeDays: null },
};

export type SettingName = keyof Settings;

/** A setting's value: the stored one, else its default. */
export async function readSetting<Name extends SettingName>(
  db: Queryable,
  name: Name,
): Promise<Settings[Name]> {
  const [row] = await db.query<{ content: Settings[Name] }>(
    'SELECT content FROM settings WHERE name = $1',
    [name],
  );
  return row?.content ?? DEFAULT_SETTINGS[name];
}

/** Stores a setting's value in the caller's transaction; returns the value it replaced. */
export async function writeSetting<Name extends SettingName>(
  tx: Queryable,
  name: Name,
  value: Settings[Name],
): Promise<Settings[Name]> {
  const before = await readSetting(tx, name);
  await tx.query(
    `INSERT INTO settings (name, content) VALUES ($1, $2::jsonb)
     ON CONFLICT (name) DO UPDATE SET content = EXCLUDED.content`,
    [name, JSON.stringify(value)],
  );
  return before;
}
