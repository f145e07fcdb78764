import { ConfigError } from '@flags/config';
import type { Actor } from '../../auth/actor.js';
import type { ServerConfig } from '../../config/options.js';
import type { Database, Queryable } from '../../db/database.js';
import { ApiError } from '../../errors.js';
import { recordEvent } from '../events/event-store.js';
import { EVENT_TYPES } from '../events/event-types.js';
import { type OidcSettings, readSetting, writeSetting } from '../settings/settings-store.js';
import { findRootRole } from '../users/user-store.js';

export type { OidcSettings };

/** The startup option (environment variable) of each settings field a message may name. */
const OPTION_OF: Readonly<Record<string, string>> = {
  discoverUrl: 'OIDC_DISCOVER_URL',
  clientId: 'OIDC_CLIENT_ID',
  secret: 'OIDC_SECRET',
  defaultRootRole: 'OIDC_DEFAULT_ROOT_ROLE',
};

/** The setting's name in the event log (Unleash's). */
export const OIDC_SETTING_EVENT_NAME = 'unleash.enterprise.auth.oidc';

const ROOT_ROLE_NAMES = ['Viewer', 'Editor', 'Admin'] as const;

/** What `GET /api/admin/auth/oidc/settings` answers: every field but `secret`. */
export const oidcSettingsResponseSchema = {
  type: 'object',
  required: [
    'enabled',
    'discoverUrl',
    'clientId',
    'autoCreate',
    'defaultRootRole',
    'emailDomains',
    'enableSingleSignOut',
    'enableGroupSyncing',
    'groupJsonPath',
    'addGroupsScope',
    'idTokenSigningAlgorithm',
  ],
  additionalProperties: false,
  properties: {
    enabled: { type: 'boolean' },
    discoverUrl: { type: 'string' },
    clientId: { type: 'string' },
    autoCreate: { type: 'boolean' },
    defaultRootRole: { type: 'string' },
    emailDomains: { type: 'string' },
    enableSingleSignOut: { type: 'boolean' },
    enableGroupSyncing: { type: 'boolean' },
    groupJsonPath: { type: 'string' },
    addGroupsScope: { type: 'boolean' },
    idTokenSigningAlgorithm: { type: 'string' },
  },
} as const;

/**
 * The body of `POST /api/admin/auth/oidc/settings`: Unleash's fields, as its Admin API and its
 * Terraform provider (`unleash_oidc`) send them. A field left out keeps its stored value (the
 * secret above all: a form that does not show it does not erase it). `defaultRootRole` is a root
 * role's name or id; `defaultRootRoleId` an id.
 */
export const oidcSettingsBodySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    enabled: { type: 'boolean' },
    discoverUrl: { type: 'string', maxLength: 2048 },
    clientId: { type: 'string', maxLength: 1024 },
    secret: { type: 'string', maxLength: 4096 },
    autoCreate: { type: 'boolean' },
    defaultRootRole: { type: ['string', 'integer'], minLength: 1, maxLength: 255 },
    defaultRootRoleId: { type: 'integer', minimum: 1, maximum: 2_147_483_647 },
    emailDomains: { type: 'string', maxLength: 4096 },
    enableSingleSignOut: { type: 'boolean' },
    enableGroupSyncing: { type: 'boolean' },
    groupJsonPath: { type: 'string', maxLength: 1024 },
    addGroupsScope: { type: 'boolean' },
    idTokenSigningAlgorithm: { type: 'string', enum: ['RS256', 'RS384', 'RS512'] },
  },
} as const;

/** The body as the schema types it. */
export interface OidcSettingsBody {
  enabled?: boolean;
  discoverUrl?: string;
  clientId?: string;
  secret?: string;
  autoCreate?: boolean;
  defaultRootRole?: string | number;
  defaultRootRoleId?: number;
  emailDomains?: string;
  enableSingleSignOut?: boolean;
  enableGroupSyncing?: boolean;
  groupJsonPath?: string;
  addGroupsScope?: boolean;
  idTokenSigningAlgorithm?: 'RS256' | 'RS384' | 'RS512';
}

/** The settings without the secret: what answers, events and logs may carry. */
export function publicOidcSettings(settings: OidcSettings): Omit<OidcSettings, 'secret'> {
  const { secret: _secret, ...rest } = settings;
  return rest;
}

/** The e-mail domains of `settings`, lowercased, without a leading `@`; empty: any domain. */
export function emailDomainsOf(settings: OidcSettings): string[] {
  return settings.emailDomains
    .split(',')
    .map((domain) => domain.trim().toLowerCase().replace(/^@/, ''))
    .filter(Boolean);
}

/** Whether a discovery URL may be fetched over plain HTTP: only on this machine. */
export function isLoopbackUrl(url: URL): boolean {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** Why `settings` cannot be used to sign in, if they cannot (each problem once). */
export function oidcSettingsProblems(settings: OidcSettings): string[] {
  const problems: string[] = [];
  let url: URL | undefined;
  try {
    url = new URL(settings.discoverUrl);
  } catch {
    problems.push('discoverUrl must be the provider’s discovery URL (https://…).');
  }
  if (url && url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackUrl(url))) {
    problems.push('discoverUrl must use https (plain http only on a loopback address).');
  }
  if (settings.clientId.trim() === '') problems.push('clientId is required.');
  if (settings.secret === '') problems.push('secret is required.');
  return problems;
}

/**
 * `body` merged over `current`, checked: an unknown root role, or settings that are enabled and
 * cannot sign anyone in, are a 400.
 */
export async function mergeOidcSettings(
  db: Queryable,
  current: OidcSettings,
  body: OidcSettingsBody,
): Promise<OidcSettings> {
  const { defaultRootRole, defaultRootRoleId, ...plain } = body;
  let roleName = current.defaultRootRole;
  const role = defaultRootRoleId ?? defaultRootRole;
  if (role !== undefined) {
    const found = await findRootRole(db, role);
    if (!found || !(ROOT_ROLE_NAMES as readonly string[]).includes(found.name)) {
      throw new ApiError('BAD_DATA', `defaultRootRole "${role}" is not Viewer, Editor or Admin.`);
    }
    roleName = found.name;
  }
  const next: OidcSettings = {
    ...current,
    ...plain,
    discoverUrl: (plain.discoverUrl ?? current.discoverUrl).trim(),
    defaultRootRole: roleName,
  };
  if (next.enabled) {
    const problems = oidcSettingsProblems(next);
    if (problems.length > 0) {
      throw new ApiError('BAD_DATA', `OpenID Connect cannot be enabled: ${problems[0]}`, problems);
    }
  }
  return next;
}

/** Stores `next` and records the change (without the secret; whether it changed is said). */
export async function saveOidcSettings(
  db: Database,
  next: OidcSettings,
  by: Pick<Actor, 'name' | 'userId'>,
): Promise<void> {
  await db.transaction(async (tx) => {
    const before = await writeSetting(tx, 'oidc', next);
    recordEvent(tx, {
      type: EVENT_TYPES.settingUpdated,
      by,
      preData: { name: OIDC_SETTING_EVENT_NAME, value: publicOidcSettings(before) },
      data: {
        name: OIDC_SETTING_EVENT_NAME,
        value: publicOidcSettings(next),
        secretChanged: before.secret !== next.secret,
      },
    });
  });
}

/**
 * Writes the `OIDC_*` options given at start over the stored settings, when they change them
 * (an event by `startup options`). Settings the options leave unusable are refused with a
 * `ConfigError` naming each problem by its variable: the start stops.
 */
export async function applyOidcOptions(db: Database, config: ServerConfig): Promise<boolean> {
  const given = Object.fromEntries(
    Object.entries(config.oidc).filter(([, value]) => value !== undefined),
  ) as OidcSettingsBody;
  if (Object.keys(given).length === 0) return false;
  const current = await readSetting(db, 'oidc');
  let next: OidcSettings;
  try {
    next = await mergeOidcSettings(db, current, given);
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    // Named as the operator wrote them: the variables, not the API's fields.
    const problems = error.details.map(
      (problem) =>
        `${problem.replace(/\b(discoverUrl|clientId|secret|defaultRootRole)\b/g, (field) => OPTION_OF[field] ?? field).replace(/\.$/, '')} (set with the OIDC_* options or POST /api/admin/auth/oidc/settings)`,
    );
    throw new ConfigError(problems);
  }
  if (JSON.stringify(next) === JSON.stringify(current)) return false;
  await saveOidcSettings(db, next, { name: 'startup options' });
  return true;
}
