import type { ClientFeatures } from '@flags/schemas';
import type { ProxyConfig } from '../config/load.js';
import type { Logger, StorageProvider } from '../config/options.js';
import type { ProxyState } from '../state.js';
import type { UpstreamClient } from './http-client.js';
import { upstreamHeaders } from './upstream.js';
import { payloadProblem } from './validate.js';

/** The key the last good payload is stored under. */
export function backupKey(config: ProxyConfig): string {
  return `flags-proxy-backup-${config.flagsAppName}`;
}

/** Saves every new snapshot's payload; a failing provider is logged, never fatal. */
export function saveSnapshots(
  state: ProxyState,
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
  state: ProxyState,
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

export async function loadBackup(
  state: ProxyState,
  provider: StorageProvider,
  key: string,
  log: Logger,
): Promise<boolean> {
  try {
    return applyIfNotReady(state, await provider.get(key), 'backup', log);
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
  state: ProxyState,
  upstream: UpstreamClient,
  log: Logger,
): Promise<boolean> {
  const bootstrap = config.bootstrap;
  if (bootstrap === undefined) return false;
  const headers: Record<string, string> = { ...upstreamHeaders(config) };
  delete headers.authorization;
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
