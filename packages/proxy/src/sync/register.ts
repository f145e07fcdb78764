import type { ProxyConfig } from '../config/load.js';
import type { Logger } from '../config/options.js';
import type { UpstreamClient } from './http-client.js';
import { PROXY_VERSION, upstreamHeaders } from './upstream.js';

const BUILT_IN_STRATEGIES = [
  'default',
  'applicationHostname',
  'gradualRolloutRandom',
  'gradualRolloutUserId',
  'gradualRolloutSessionId',
  'userWithId',
  'remoteAddress',
  'flexibleRollout',
];

/** The body of `POST {flagsUrl}/client/register` (Unleash client registration format). */
export function registrationBody(
  config: ProxyConfig,
  customStrategyNames: readonly string[],
  started: Date,
) {
  const headers = upstreamHeaders(config);
  return {
    appName: config.flagsAppName,
    instanceId: config.flagsInstanceId,
    connectionId: headers['unleash-connection-id'],
    sdkVersion: `flags-proxy:${PROXY_VERSION}`,
    strategies: [...new Set([...BUILT_IN_STRATEGIES, ...customStrategyNames])],
    started: started.toISOString(),
    interval: config.metricsInterval,
    platformName: 'node',
    platformVersion: process.versions.node,
    yggdrasilVersion: null,
    specVersion: '5.2.0',
  };
}

/** Registers this proxy upstream once; a failure is logged and does not stop the proxy. */
export async function registerUpstream(
  config: ProxyConfig,
  upstream: UpstreamClient,
  log: Logger,
  customStrategyNames: readonly string[],
): Promise<boolean> {
  const url = new URL('client/register', config.flagsUrl);
  try {
    const response = await upstream.request(url, {
      method: 'POST',
      headers: { ...upstreamHeaders(config), 'content-type': 'application/json' },
      body: JSON.stringify(registrationBody(config, customStrategyNames, new Date())),
      timeoutMs: config.upstreamTimeoutMs,
    });
    await response.dump();
    if (response.status >= 300) {
      log.warn({ status: response.status, url: url.href }, 'upstream registration was refused');
      return false;
    }
    return true;
  } catch (error) {
    log.warn(
      { err: error instanceof Error ? error.message : String(error), url: url.href },
      'upstream registration failed',
    );
    return false;
  }
}
