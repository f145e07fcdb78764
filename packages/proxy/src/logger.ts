import { createRequire } from 'node:module';
import { pino } from 'pino';
import type pinoPretty from 'pino-pretty';
import type { ProxyConfig } from './config/load.js';
import type { Logger } from './config/options.js';

/**
 * The default logger: pino at `logLevel`, one JSON object per line with `useJsonLogger`, readable
 * lines otherwise. Tokens and keys are never passed to it; the redaction is a second safety net.
 */
export function createLogger(
  config: Pick<ProxyConfig, 'logger' | 'logLevel' | 'useJsonLogger'>,
): Logger {
  if (config.logger !== undefined) return config.logger;
  const options = {
    name: 'flags-proxy',
    level: config.logLevel,
    redact: ['authorization', 'flagsApiToken', 'clientKeys', 'headers.authorization'],
  };
  if (config.useJsonLogger) return pino(options);
  // Loaded only for readable lines: JSON-logging proxies do not carry the formatter in memory.
  const pretty = createRequire(import.meta.url)('pino-pretty') as typeof pinoPretty;
  return pino(
    options,
    pretty({ colorize: false, sync: true, translateTime: 'SYS:standard', ignore: 'pid,hostname' }),
  );
}

export function isDebug(log: Logger): boolean {
  return log.isLevelEnabled?.('debug') ?? false;
}
