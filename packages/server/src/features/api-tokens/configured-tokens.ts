import type { FastifyBaseLogger } from 'fastify';
import { maskToken, parseClientTokenScope } from '../../config/load.js';
import type { ServerConfig } from '../../config/options.js';
import type { Database } from '../../db/database.js';
import type { NewApiToken, TokenStore } from './token-store.js';

/** Below this many characters of secret (after any `project:environment.` scope), start warns. */
export const MIN_SECRET_CHARS = 32;

type ConfiguredTokenSettings = Pick<
  ServerConfig,
  'adminTokens' | 'clientTokens' | 'frontendTokens'
>;

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
  const admin = config.adminTokens.map(
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
    ...config.clientTokens.map((secret) => scopedToken(secret, 'client')),
    ...config.frontendTokens.map((secret) => scopedToken(secret, 'frontend')),
  ];
}

/** The part of a token that is secret: what follows the scope prefix, if it has one. */
function secretPart(token: string): string {
  return token.slice(token.indexOf('.') + 1);
}

/**
 * At start: creates the configured tokens, deletes tokens an earlier configuration created that
 * this one no longer has, and warns about short secrets (a warning, not a refusal: short
 * configured tokens worked before). Every server sharing a database should be given the same
 * tokens, or each start revokes the others'.
 */
export async function applyConfiguredTokens(
  config: ConfiguredTokenSettings,
  db: Database,
  store: TokenStore,
  log: FastifyBaseLogger,
): Promise<void> {
  const configured = configuredTokens(config);
  const { created, deleted } = await db.transaction((tx) => store.syncConfigured(configured, tx));
  store.changed();
  for (const token of created) {
    log.info({ token: token.masked, type: token.type }, 'token created from configuration');
  }
  for (const token of deleted) {
    log.info(
      { token: token.masked, type: token.type },
      'token deleted: it is no longer in FLAGS_ADMIN_TOKENS, FLAGS_CLIENT_TOKENS or FLAGS_FRONTEND_TOKENS',
    );
  }
  for (const { secret } of configured) {
    if (secretPart(secret).length < MIN_SECRET_CHARS) {
      log.warn(
        { token: maskToken(secret) },
        `configured token's secret is shorter than ${MIN_SECRET_CHARS} characters: easy to guess; use a long random one`,
      );
    }
  }
}
