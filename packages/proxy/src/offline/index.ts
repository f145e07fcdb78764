import { randomBytes } from 'node:crypto';
import type { Loaded } from '@flags/config';
import { parseUnleashToken } from '../auth/unleash-token.js';
import type { ProxyOptions } from '../config/options.js';
import type { offlineSchema } from './options.js';
import type { OfflineUpstream } from './upstream.js';

export { offlineConfig, offlineSchema } from './options.js';
export { OfflineUpstream } from './upstream.js';

/** The proxy's options that offline mode sets itself (`offlineProxyOptions`). */
export const UPSTREAM_OPTIONS: ReadonlySet<string> = new Set(['flagsUrl', 'flagsApiToken']);

/**
 * The proxy's own options in offline mode: `upstream` as its upstream, synced with the client
 * tokens (and one for each environment only Unleash-format frontend tokens name); Unleash-format
 * frontend tokens pretrusted (they scope by environment and projects), others client keys; no
 * usage reports (no one to send them to); the file's changes picked up within a second of a
 * reload.
 */
export function offlineProxyOptions(
  upstream: OfflineUpstream,
  settings: Loaded<typeof offlineSchema>,
): ProxyOptions {
  const unleashFormat = settings.frontendTokens.filter((t) => parseUnleashToken(t) !== undefined);
  const plain = settings.frontendTokens.filter((t) => parseUnleashToken(t) === undefined);
  const syncedByUnleashToken = upstream.syncTokens.some((t) => parseUnleashToken(t) !== undefined);
  return {
    flagsUrl: upstream.url,
    flagsApiToken: [...upstream.syncTokens],
    pretrustedTokens: unleashFormat,
    // The proxy wants client keys unless a sync token is Unleash-format; with none to give, one
    // nobody knows keeps the frontend API closed.
    clientKeys:
      plain.length > 0 || syncedByUnleashToken ? plain : [randomBytes(32).toString('hex')],
    metricsInterval: 0,
    // A file read once never changes: polled only as a matter of form.
    refreshInterval: settings.reloadInterval > 0 ? 1000 : 60_000,
  };
}
