import type { Queryable } from '../../db/database.js';

/** Instance settings Admins change through the admin API, and their values when never set. */
export interface Settings {
  /** The longest a new personal access token may live, in days; null: no limit. */
  readonly personalAccessTokens: { readonly maxLifetimeDays: number | null };
  /** Single sign-on with OpenID Connect (`features/sso/oidc-settings.ts`). */
  readonly oidc: OidcSettings;
  /** Password logins: `disabled` leaves them to the break-glass Admin only. */
  readonly simpleAuth: { readonly disabled: boolean };
}

/** The OpenID Connect settings, in Unleash's shape (`/api/admin/auth/oidc/settings`). */
export interface OidcSettings {
  readonly enabled: boolean;
  readonly discoverUrl: string;
  readonly clientId: string;
  /** Stored, never answered, logged or recorded in an event. */
  readonly secret: string;
  readonly autoCreate: boolean;
  /** A root role name: Viewer, Editor or Admin. */
  readonly defaultRootRole: string;
  /** Comma-separated e-mail domains allowed to sign in (any case); empty: every domain. */
  readonly emailDomains: string;
  readonly enableSingleSignOut: boolean;
  readonly enableGroupSyncing: boolean;
  /** Where the groups claim is, as a dotted path (`groups`, `realm_access.roles`). */
  readonly groupJsonPath: string;
  /** Asks the provider for the `groups` scope too. */
  readonly addGroupsScope: boolean;
  readonly idTokenSigningAlgorithm: string;
}

export const DEFAULT_SETTINGS: Settings = {
  personalAccessTokens: { maxLifetimeDays: null },
  oidc: {
    enabled: false,
    discoverUrl: '',
    clientId: '',
    secret: '',
    autoCreate: false,
    defaultRootRole: 'Editor',
    emailDomains: '',
    enableSingleSignOut: false,
    enableGroupSyncing: false,
    groupJsonPath: '',
    addGroupsScope: false,
    idTokenSigningAlgorithm: 'RS256',
  },
  simpleAuth: { disabled: false },
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
  // Fields added after a value was stored take their defaults.
  const stored = row?.content;
  if (stored === undefined) return DEFAULT_SETTINGS[name];
  return { ...DEFAULT_SETTINGS[name], ...stored };
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
