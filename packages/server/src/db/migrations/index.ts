import { sql as init } from './0001-init.js';
import { sql as signupAndInsights } from './0010-signup-and-insights.js';
import { sql as enablingEvents } from './0011-enabling-events.js';
import { sql as secretsAndUsernames } from './0012-secrets-and-usernames.js';
import { sql as clientDataRetention } from './0013-client-data-retention.js';
import { sql as frontendTokensAndConnections } from './0014-frontend-tokens-and-connections.js';
import { sql as clientChangeLog } from './0015-client-change-log.js';
import { sql as clientApplicationRetention } from './0016-client-application-retention.js';
import { sql as eventLog } from './0017-event-log.js';
import { sql as flagVersions } from './0018-flag-versions.js';
import { sql as sessionsAndRoles } from './0020-sessions-and-roles.js';
import { sql as adminResources } from './0021-admin-resources.js';
import { sql as simpleTagType } from './0022-simple-tag-type.js';
import { sql as loginThrottling } from './0023-login-throttling.js';
import { sql as userAdministration } from './0024-user-administration.js';
import { sql as singleSignOn } from './0025-single-sign-on.js';
import { sql as builtInContextFields } from './0026-built-in-context-fields.js';
import { sql as disabledUsers } from './0027-disabled-users.js';

/**
 * Versioned migrations, applied in order and recorded in `schema_migrations`.
 * They are TypeScript modules (not .sql files) so the built `dist/` carries them without a copy step.
 * Never edit a released migration: add the next one.
 */
export const migrations: readonly {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}[] = [
  { version: 1, name: 'init', sql: init },
  { version: 10, name: 'signup-and-insights', sql: signupAndInsights },
  { version: 11, name: 'enabling-events', sql: enablingEvents },
  { version: 12, name: 'secrets-and-usernames', sql: secretsAndUsernames },
  { version: 13, name: 'client-data-retention', sql: clientDataRetention },
  { version: 14, name: 'frontend-tokens-and-connections', sql: frontendTokensAndConnections },
  { version: 15, name: 'client-change-log', sql: clientChangeLog },
  { version: 16, name: 'client-application-retention', sql: clientApplicationRetention },
  { version: 17, name: 'event-log', sql: eventLog },
  { version: 18, name: 'flag-versions', sql: flagVersions },
  { version: 20, name: 'sessions-and-roles', sql: sessionsAndRoles },
  { version: 21, name: 'admin-resources', sql: adminResources },
  { version: 22, name: 'simple-tag-type', sql: simpleTagType },
  { version: 23, name: 'login-throttling', sql: loginThrottling },
  { version: 24, name: 'user-administration', sql: userAdministration },
  { version: 25, name: 'single-sign-on', sql: singleSignOn },
  { version: 26, name: 'built-in-context-fields', sql: builtInContextFields },
  { version: 27, name: 'disabled-users', sql: disabledUsers },
];
