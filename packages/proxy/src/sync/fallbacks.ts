import type { ClientFeatures } from '@flags/schemas';
import type { EnvironmentState } from '@flags/serving';
import type { TokenRecord, TokenValidator } from '../auth/token-validator.js';
import { parseUnleashToken } from '../auth/unleash-token.js';
import type { ProxyConfig } from '../config/load.js';
import type { Logger, StorageProvider } from '../config/options.js';
import type { EdgeBackup } from './edge-backup.js';
import type { UpstreamClient } from './http-client.js';
import { upstreamHeaders } from './upstream.js';
import { payloadProblem } from './validate.js';

/**
 * The key an environment's last good payload is stored under. A plain startup token's
 * environment keeps the key a one-environment proxy always used, so its backup survives upgrades.
 */
export function backupKey(config: ProxyConfig, environment: string): string {
  const base = `flags-proxy-backup-${config.flagsAppName}`;
  const plain = config.startupTokens.some((token) => parseUnleashToken(token) === undefined);
  return plain && environment === (config.environment ?? 'default')
    ? base
    : `${base}-${environment}`;
}

/** The key the validated tokens are stored under. */
export function tokensKey(config: ProxyConfig): string {
  return `flags-proxy-tokens-${config.flagsAppName}`;
}

/** What the token backup holds (stored through the same provider as the payloads). */
interface TokenBackup {
  readonly tokens: readonly TokenRecord[];
}

/** Saves the validated tokens after every change, so a restart while the upstream is down knows them. */
export function saveTokens(
  validator: TokenValidator,
  provider: StorageProvider,
  key: string,
  log: Logger,
): void {
  validator.onChange(() => {
    const backup: TokenBackup = {
      tokens: validator.records().filter((record) => record.status === 'valid'),
    };
    provider.set(key, backup as unknown as ClientFeatures).catch((error: unknown) => {
      log.warn(
        { err: error instanceof Error ? error.message : String(error) },
        'saving the token backup failed',
      );
    });
  });
}

/**
 * Reads the saved tokens back (what the validator already knows wins); with none of ours saved,
 * the tokens Unleash Edge saved in the same store (`edge`).
 */
export async function loadTokens(
  validator: TokenValidator,
  provider: StorageProvider,
  key: string,
  log: Logger,
  edge?: EdgeBackup,
): Promise<void> {
  try {
    const backup = (await provider.get(key)) as unknown as TokenBackup | undefined;
    if (backup === undefined || backup === null || !Array.isArray(backup.tokens)) {
      const records = (await edge?.tokens()) ?? [];
      if (records.length > 0) log.info({ tokens: records.length }, 'read Unleash Edge’s tokens');
      validator.restore(records);
      return;
    }
    validator.restore(backup.tokens.filter(isTokenRecord));
  } catch (error) {
    log.warn(
      { err: error instanceof Error ? error.message : String(error) },
      'reading the token backup failed',
    );
  }
}

function isTokenRecord(value: unknown): value is TokenRecord {
  const record = value as Partial<TokenRecord> | null;
  const info = record?.info;
  return (
    typeof record?.token === 'string' &&
    record.status === 'valid' &&
    typeof record.checkedAt === 'number' &&
    info !== undefined &&
    info.token === record.token &&
    (info.type === 'client' || info.type === 'frontend') &&
    typeof info.environment === 'string' &&
    Array.isArray(info.projects) &&
    info.projects.every((project) => typeof project === 'string')
  );
}

/** Saves every new snapshot's payload; a failing provider is logged, never fatal. */
export function saveSnapshots(
  state: EnvironmentState,
  provider: StorageProvider,
  key: string,
  log: Logger,
): void {
  state.onUpdate((compiled) => {
    provider.set(key, compiled.payload).catch((error: unknown) => {
      log.warn(
        { err: error instanceof Error ? error.message : String(error) },
        'saving the backup failed',
      );
    });
  });
}

/**
 * Serves `payload` unless the upstream already answered: backups and bootstrap payloads only
 * bridge the time until the first sync. Returns whether it was applied.
 */
function applyIfNotReady(
  state: EnvironmentState,
  payload: unknown,
  source: string,
  log: Logger,
): boolean {
  if (state.ready) return false;
  const problem = payloadProblem(payload);
  if (problem !== undefined) {
    log.warn({ source, problem }, 'ignoring an invalid fallback payload');
    return false;
  }
  if ((payload as ClientFeatures).features.length === 0) return false;
  state.update(payload as ClientFeatures);
  log.info(
    { source, features: (payload as ClientFeatures).features.length },
    `serving the ${source} payload until the first upstream sync`,
  );
  return true;
}

/**
 * Serves the payload saved under `key` until the first upstream sync, or with none of ours
 * saved, the one Unleash Edge saved for the environment (`edge`); whether one was applied.
 */
export async function loadBackup(
  state: EnvironmentState,
  provider: StorageProvider,
  key: string,
  log: Logger,
  /** Applied only once this has settled too (read meanwhile). */
  after: Promise<unknown> = Promise.resolve(),
  edge?: { readonly backup: EdgeBackup; readonly environment: string },
): Promise<boolean> {
  try {
    const [payload] = await Promise.all([provider.get(key), after]);
    if (payload === undefined && edge !== undefined) {
      const edgePayload = await edge.backup.features(edge.environment);
      if (edgePayload === undefined) return false;
      return applyIfNotReady(state, edgePayload, 'Unleash Edge backup', log);
    }
    return applyIfNotReady(state, payload, 'backup', log);
  } catch (error) {
    log.warn(
      { err: error instanceof Error ? error.message : String(error) },
      'reading the backup failed',
    );
    return false;
  }
}

/** Fetches `expBootstrap.url` (with its Authorization header) and serves it until the first sync. */
export async function loadBootstrap(
  config: ProxyConfig,
  state: EnvironmentState,
  upstream: UpstreamClient,
  log: Logger,
): Promise<boolean> {
  const bootstrap = config.bootstrap;
  if (bootstrap === undefined) return false;
  const headers: Record<string, string> = { ...upstreamHeaders(config) };
  delete headers[config.upstreamAuthHeader];
  if (bootstrap.authorization !== undefined) headers.authorization = bootstrap.authorization;
  try {
    const response = await upstream.request(bootstrap.url, {
      method: 'GET',
      headers,
      timeoutMs: config.upstreamTimeoutMs,
    });
    if (response.status !== 200) {
      await response.dump();
      log.warn({ status: response.status, url: bootstrap.url.href }, 'bootstrap request failed');
      return false;
    }
    return applyIfNotReady(state, JSON.parse(await response.text()), 'bootstrap', log);
  } catch (error) {
    log.warn(
      { err: error instanceof Error ? error.message : String(error), url: bootstrap.url.href },
      'bootstrap request failed',
    );
    return false;
  }
}
