import { randomUUID } from 'node:crypto';
import type { ProxyConfig } from '../config/load.js';

export const PROXY_VERSION = '0.1.0';
export const USER_AGENT = `flags-proxy/${PROXY_VERSION}`;

/** One per process, like the upstream expects (`UNLEASH-CONNECTION-ID`). */
const connectionId = randomUUID();

/** Headers every upstream request carries. */
export function upstreamHeaders(config: ProxyConfig): Record<string, string> {
  return {
    // First, so nothing here can be replaced (`load.ts` refuses these names in customHeaders).
    ...config.customHeaders,
    [config.upstreamAuthHeader]: config.flagsApiToken,
    'user-agent': USER_AGENT,
    'unleash-appname': config.flagsAppName,
    'unleash-instanceid': config.flagsInstanceId,
    'unleash-connection-id': connectionId,
    'unleash-sdk': `flags-proxy:${PROXY_VERSION}`,
    'unleash-client-spec': '5.2.0',
  };
}

/** `GET {flagsUrl}/client/features` with the configured filters. */
export function featuresUrl(config: ProxyConfig): URL {
  const url = new URL('client/features', config.flagsUrl);
  if (config.projectName !== undefined) url.searchParams.append('project', config.projectName);
  if (config.namePrefix !== undefined) url.searchParams.append('namePrefix', config.namePrefix);
  for (const tag of config.tags) url.searchParams.append('tag', `${tag.name}:${tag.value}`);
  return url;
}

/** `GET {flagsUrl}/client/streaming`: the upstream's event stream (Server-Sent Events). */
export function streamingUrl(config: ProxyConfig): URL {
  return new URL('client/streaming', config.flagsUrl);
}
