import type { Database } from '../../db/database.js';
import { recordEvent } from '../events/event-store.js';
import { EVENT_TYPES } from '../events/event-types.js';
import { createUser, findRootRole, getUsers, setRootRole, userClash } from '../users/user-store.js';
import { rootRoleForSsoGroups } from './groups.js';
import type { OidcIdentity } from './oidc-login.js';
import { emailDomainsOf, type OidcSettings } from './oidc-settings.js';

/** The user a sign-in opens a session for, and whether their root role changed. */
export interface SignedInUser {
  readonly id: number;
  readonly email: string;
  readonly created: boolean;
  readonly roleChanged: boolean;
}

/** Who records what a sign-in changes in the event log. */
const BY = { name: 'single sign-on' } as const;

/**
 * The user `identity` signs in as, by e-mail (any case): refused (`SsoRefusal`'s reasons, as
 * strings, thrown by the caller) when the provider sent no e-mail or an unverified one, its domain
 * is not in `emailDomains`, its user is disabled, or nobody has it and `autoCreate` is off. A new
 * user gets the root role the groups give, else `defaultRootRole`; with group syncing, an existing
 * user's root role follows the groups (else `defaultRootRole`) at every sign-in. Creations and
 * role changes are events.
 */
export async function signInUser(
  db: Database,
  settings: OidcSettings,
  identity: OidcIdentity,
  refuse: (reason: string, notAllowed: boolean, username?: string) => never,
  retried = false,
): Promise<SignedInUser> {
  const { email } = identity;
  if (email === undefined) {
    return refuse('the provider sent no e-mail (ask for the email scope)', true, identity.subject);
  }
  if (identity.emailVerified === false) {
    return refuse('the provider says this e-mail is not verified', true, email);
  }
  const domains = emailDomainsOf(settings);
  const domain = email.slice(email.lastIndexOf('@') + 1).toLowerCase();
  if (domains.length > 0 && !domains.includes(domain)) {
    return refuse(`e-mail domain ${domain} is not in emailDomains`, true, email);
  }
  const synced =
    settings.enableGroupSyncing && identity.groups !== undefined
      ? await rootRoleForSsoGroups(db, identity.groups)
      : undefined;
  const fallback = await findRootRole(db, settings.defaultRootRole);
  const role = synced ?? (fallback && { id: fallback.id, name: fallback.name });
  if (!role) return refuse(`defaultRootRole ${settings.defaultRootRole} is unknown`, true, email);

  try {
    return await db.transaction(async (tx) => {
      const [found] = await tx.query<{ id: number; disabled: boolean }>(
        `SELECT id, disabled_at IS NOT NULL AS disabled FROM users
          WHERE deleted_at IS NULL AND lower(email) = lower($1)
          ORDER BY id LIMIT 1 FOR UPDATE`,
        [email],
      );
      // An Admin disabled this user here: neither signed in nor created again.
      if (found?.disabled) return refuse('the user with this e-mail is disabled', true, email);
      if (!found) {
        // A row kept for a user taken out here (`deleted_at`) holds the e-mail: the provider
        // cannot bring that person back.
        const [kept] = await tx.query(
          'SELECT 1 FROM users WHERE deleted_at IS NOT NULL AND lower(email) = lower($1) LIMIT 1',
          [email],
        );
        if (kept) return refuse('the user with this e-mail was disabled here', true, email);
        if (!settings.autoCreate) {
          return refuse('no user has this e-mail and autoCreate is off', true, email);
        }
        const created = await createUser(tx, {
          name: identity.name ?? null,
          email,
          rootRoleId: role.id,
        });
        recordEvent(tx, { type: EVENT_TYPES.userCreated, by: BY, data: created });
        return { id: created.id, email, created: true, roleChanged: false };
      }
      if (!settings.enableGroupSyncing) {
        return { id: found.id, email, created: false, roleChanged: false };
      }
      const [before] = await getUsers(tx, [found.id]);
      if (before?.rootRole === role.id) {
        return { id: found.id, email, created: false, roleChanged: false };
      }
      await setRootRole(tx, found.id, role.id);
      const [after] = await getUsers(tx, [found.id]);
      recordEvent(tx, { type: EVENT_TYPES.userUpdated, by: BY, preData: before, data: after });
      return { id: found.id, email, created: false, roleChanged: true };
    });
  } catch (error) {
    // Two first sign-ins of one person at once: the second finds the first's user (once).
    if (userClash(error) && !retried) return signInUser(db, settings, identity, refuse, true);
    throw error;
  }
}
