import { compile as compileTrust } from '@fastify/proxy-addr';
import { type LogLevel, type OptionSpec, options, type ServerConfig } from './options.js';

const LEVELS: ReadonlySet<string> = new Set([
  'fatal',
  'error',
  'warn',
  'info',
  'debug',
  'trace',
  'silent',
]);

export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}

type Parsed = ServerConfig[keyof ServerConfig];

function parseValue(spec: OptionSpec, name: string, raw: string): Parsed | Error {
  switch (spec.type) {
    case 'port': {
      const port = Number(raw);
      return Number.isInteger(port) && port >= 0 && port <= 65535
        ? port
        : new Error(`${name} must be a port number (0-65535), got "${raw}"`);
    }
    case 'bytes':
    case 'ms':
    case 'days':
    case 'count': {
      const value = Number(raw);
      if (!Number.isInteger(value) || value <= 0) {
        return new Error(`${name} must be a positive integer, got "${raw}"`);
      }
      return spec.min !== undefined && value < spec.min
        ? new Error(`${name} must be at least ${spec.min}, got "${raw}"`)
        : value;
    }
    case 'string':
      return raw;
    case 'url':
      try {
        return new URL(raw);
      } catch {
        return new Error(`${name} must be a URL, got "${raw}"`);
      }
    case 'list':
      return raw
        .split(',')
        .map((item) => item.trim())
        .filter((item) => item !== '');
    case 'level':
      return LEVELS.has(raw)
        ? (raw as LogLevel)
        : new Error(`${name} must be one of ${[...LEVELS].join(', ')}, got "${raw}"`);
    case 'boolean':
      if (raw === 'true' || raw === '1') return true;
      if (raw === 'false' || raw === '0') return false;
      return new Error(`${name} must be true or false, got "${raw}"`);
    case 'trust-proxy':
      return parseTrustProxy(name, raw);
  }
}

/** `true`, `false`, a hop count, or trusted addresses checked the way Fastify will use them. */
function parseTrustProxy(name: string, raw: string): boolean | number | string[] | Error {
  const value = raw.trim().toLowerCase();
  if (value === 'true') return true;
  if (value === 'false') return false;
  if (/^\d+$/.test(value)) return Number(value);
  const addresses = value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
  try {
    compileTrust(addresses);
    return addresses;
  } catch (error) {
    return new Error(
      `${name} must be true, false, a hop count or IP/CIDR addresses: ${(error as Error).message}`,
    );
  }
}

/**
 * Builds the configuration from environment variables (`env`) and in-code overrides
 * (`overrides` win). Every problem is reported at once in a `ConfigError`.
 */
export function loadConfig(
  env: Readonly<Record<string, string | undefined>> = {},
  overrides: Partial<ServerConfig> = {},
): ServerConfig {
  const problems: string[] = [];
  const config: Record<string, unknown> = {};
  for (const spec of options) {
    if (spec.key in overrides) {
      config[spec.key] = overrides[spec.key];
      continue;
    }
    const name = spec.env.find(
      (candidate) => env[candidate] !== undefined && env[candidate] !== '',
    );
    const raw = name ? env[name] : spec.default;
    if (raw === undefined) {
      config[spec.key] = undefined;
      continue;
    }
    const value = parseValue(spec, name ?? spec.env[0]!, raw);
    if (value instanceof Error) problems.push(value.message);
    else config[spec.key] = value;
  }
  for (const token of (config.clientTokens as string[] | undefined) ?? []) {
    if (!parseClientTokenScope(token)) {
      problems.push(
        `FLAGS_CLIENT_TOKENS: "${maskToken(token)}" is not of the form project:environment.secret`,
      );
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(config) as unknown as ServerConfig;
}

/** `project:environment.secret` → its scope; `undefined` when the form is wrong. */
export function parseClientTokenScope(
  token: string,
): { project: string; environment: string } | undefined {
  const match = /^([^:]+):([^.]+)\.(.+)$/.exec(token);
  if (!match || match[2] === '*') return undefined;
  return { project: match[1]!, environment: match[2]! };
}

/** Tokens never reach logs or messages whole: keep the scope prefix and 4 characters. */
export function maskToken(token: string): string {
  const dot = token.indexOf('.');
  const prefix = dot >= 0 ? token.slice(0, dot + 1) : '';
  const secret = dot >= 0 ? token.slice(dot + 1) : token;
  return `${prefix}${secret.slice(0, 4)}…`;
}
