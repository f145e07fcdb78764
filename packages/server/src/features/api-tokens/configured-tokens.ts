import type { FastifyBaseLogger } from 'fastify';
import { maskToken, parseClientTokenScope } from '../../config/load.js';
import type { ServerConfig } from '../../config/options.js';
import { serverConfig } from '../../config/options.js';
import type { Database } from '../../db/database.js';
import type { NewApiToken, TokenStore, TokenType } from './token-store.js';

/** Below this many characters of secret (after any `project:environment.` scope), start warns. */
export const MIN_SECRET_CHARS = 32;

type ConfiguredTokenSettings = Pick<
  ServerConfig,
  'adminTokens' | 'clientTokens' | 'frontendTokens'
>;

/** Each token option, the type of token it creates, and its variable (from the option table). */
const TOKEN_OPTIONS = (
  [
    ['adminTokens', 'admin'],
    ['clientTokens', 'client'],
    ['frontendTokens', 'frontend'],
  ] as const
).map(([key, type]) => ({
  key,
  type,
  variable: serverConfig.options.find((row) => row.key === key)!.env[0]!,
}));

/** The variable that creates configured tokens of `type`: `FLAGS_CLIENT_TOKENS`. */
function variableOf(type: TokenType): string {
  return TOKEN_OPTIONS.find((option) => option.type === type)!.variable;
}

/** A configured `project:environment.secret` token of a scoped type. */
function scopedToken(secret: string, type: 'client' | 'frontend'): NewApiToken {
  // `loadConfig` has refused scoped tokens without a scope.
  const scope = parseClientTokenScope(secret)!;
  return {
    secret,
    tokenName: `${type} (configured)`,
    type,
    environment: scope.environment,
    projects: [scope.project],
    expiresAt: null,
    source: 'config',
  };
}

/** The tokens `FLAGS_ADMIN_TOKENS`, `FLAGS_CLIENT_TOKENS` and `FLAGS_FRONTEND_TOKENS` configure. */
export function configuredTokens(config: ConfiguredTokenSettings): NewApiToken[] {
  const admin = (config.adminTokens ?? []).map(
    (secret): NewApiToken => ({
      secret,
      tokenName: 'admin (configured)',
      type: 'admin',
      environment: null,
      projects: ['*'],
      expiresAt: null,
      source: 'config',
    }),
  );
  return [
    ...admin,
    ...(config.clientTokens ?? []).map((secret) => scopedToken(secret, 'client')),
    ...(config.frontendTokens ?? []).map((secret) => scopedToken(secret, 'frontend')),
  ];
}

/** The part of a token that is secret: what follows the scope prefix, if it has one. */
function secretPart(token: string): string {
  return token.slice(token.indexOf('.') + 1);
}

/**
 * At start: creates the configured tokens; for each token variable that is set, deletes the tokens
 * an earlier value of it created that it no longer lists (a warning naming the variable: a
 * running proxy may hold one); warns about short secrets (a warning, not a refusal: short
 * configured tokens worked before) unless they are in `publicSecrets`. An unset variable deletes nothing, so a replica started
 * without one leaves the others' tokens alone (issue 47); servers sharing a database that set a
 * variable should set it alike, or each start revokes the others' tokens of that kind.
 */
export async function applyConfiguredTokens(
  config: ConfiguredTokenSettings,
  db: Database,
  store: TokenStore,
  log: FastifyBaseLogger,
  publicSecrets: ReadonlySet<string> = new Set(),
): Promise<void> {
  const configured = configuredTokens(config);
  const governed = TOKEN_OPTIONS.filter(({ key }) => config[key] !== undefined).map(
    ({ type }) => type,
  );
  const { created, deleted } = await db.transaction((tx) =>
    store.syncConfigured(configured, governed, tx),
  );
  store.changed();
  for (const token of created) {
    log.info({ token: token.masked, type: token.type }, 'token created from configuration');
  }
  for (const token of deleted) {
    const variable = variableOf(token.type);
    log.warn(
      { token: token.masked, type: token.type, variable },
      `token deleted: ${variable} no longer lists it; every server sharing this database should be given the same ${variable} (or leave it unset, which deletes nothing)`,
    );
  }
  for (const { secret } of configured) {
    // A secret public on purpose (the demo's, which says so itself) is no easier to guess short.
    if (secretPart(secret).length < MIN_SECRET_CHARS && !publicSecrets.has(secret)) {
      log.warn(
        { token: maskToken(secret) },
        `configured token's secret is shorter than ${MIN_SECRET_CHARS} characters: easy to guess; use a long random one`,
      );
    }
  }
}
