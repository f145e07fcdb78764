import { hostname } from 'node:os';
import { compile as compileTrust } from '@fastify/proxy-addr';
import type { CustomStrategy } from '@flags/engine';
import {
  type ContextEnricher,
  type CorsOptions,
  LOG_LEVELS,
  type Logger,
  type LogLevel,
  type OptionSpec,
  options,
  type ProxyOptions,
  type StorageProvider,
  type TagFilter,
  type TrustProxy,
} from './options.js';

/** Every problem found in a configuration, reported at once. */
export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}

export interface ResolvedCors {
  readonly origin: '*' | ReadonlySet<string>;
  readonly methods: string;
  /** `undefined`: reflect the preflight's `Access-Control-Request-Headers`. */
  readonly allowedHeaders: string | undefined;
  readonly exposedHeaders: string;
  readonly credentials: boolean;
  readonly maxAge: number;
  readonly preflightContinue: boolean;
  readonly optionsSuccessStatus: number;
}

/** The validated, frozen configuration the app runs with. */
export interface ProxyConfig {
  readonly flagsUrl: URL;
  readonly flagsApiToken: string;
  readonly clientKeys: readonly string[];
  readonly port: number;
  readonly host: string;
  readonly proxyBasePath: string;
  readonly flagsAppName: string;
  readonly flagsInstanceId: string;
  readonly refreshInterval: number;
  readonly metricsInterval: number;
  readonly metricsJitter: number;
  readonly upstreamTimeoutMs: number;
  readonly environment: string | undefined;
  readonly projectName: string | undefined;
  readonly namePrefix: string | undefined;
  readonly tags: readonly TagFilter[];
  readonly logger: Logger | undefined;
  readonly useJsonLogger: boolean;
  readonly logLevel: LogLevel;
  readonly customStrategies: readonly (CustomStrategy | string)[];
  readonly trustProxy: TrustProxy;
  /** The request address, never the caller's `remoteAddress`, goes into evaluation contexts. */
  readonly ignoreCallerRemoteAddress: boolean;
  readonly clientKeysHeaderName: string;
  readonly storageProvider: StorageProvider | undefined;
  readonly backupDir: string | undefined;
  readonly redisUrl: URL | undefined;
  readonly redisKeyPrefix: string;
  readonly enableOAS: boolean;
  readonly enableAllEndpoint: boolean;
  readonly maxBodyBytes: number;
  readonly answerCacheBytes: number;
  /** Registrations and usage reports per client address and minute; 0: no limit. */
  readonly reportsPerMinute: number;
  readonly maxContextValueLength: number;
  readonly cors: ResolvedCors;
  readonly rejectUnauthorized: boolean;
  readonly httpProxy: URL | undefined;
  readonly httpsProxy: URL | undefined;
  readonly noProxy: readonly string[];
  readonly bootstrap: { readonly url: URL; readonly authorization: string | undefined } | undefined;
  readonly serverSideTokens: readonly string[];
  readonly expCustomEnrichers: readonly (ContextEnricher | string)[];
}

function splitList(raw: string): string[] {
  return raw
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

/** An address, CIDR range or keyword (`loopback`, ...) as Fastify's proxy-addr will read it. */
function isTrustedProxyEntry(value: string): boolean {
  try {
    compileTrust(value);
    return true;
  } catch {
    return false;
  }
}

/** Parses one environment value by the option's type; an `Error` names the variable. */
function parseEnv(spec: OptionSpec, name: string, raw: string): unknown {
  const fail = (expected: string) => new Error(`${name} must be ${expected}, got "${raw}"`);
  switch (spec.type) {
    case 'url':
      try {
        return new URL(raw);
      } catch {
        return fail('a URL');
      }
    case 'string':
    case 'secret':
    case 'base-path':
    case 'object':
      return raw;
    case 'list':
    case 'secret-list':
    case 'paths':
      return splitList(raw);
    case 'ms':
    case 'seconds':
    case 'bytes':
    case 'budget':
    case 'count':
    case 'length':
      return /^\d+$/.test(raw.trim()) ? Number(raw) : fail('a whole number');
    case 'port':
      return /^\d+$/.test(raw.trim()) ? Number(raw) : fail('a port number (0-65535)');
    case 'status':
      return /^\d+$/.test(raw.trim()) ? Number(raw) : fail('an HTTP status code');
    case 'boolean': {
      const lower = raw.trim().toLowerCase();
      if (lower === 'true') return true;
      if (lower === 'false') return false;
      return fail('true or false');
    }
    case 'level':
      return raw.trim().toLowerCase();
    case 'trust-proxy': {
      const lower = raw.trim().toLowerCase();
      if (lower === 'true') return true;
      if (lower === 'false' || lower === '') return false;
      return splitList(raw);
    }
    case 'tags':
      return splitList(raw).map((pair) => {
        const colon = pair.indexOf(':');
        return colon === -1
          ? { name: pair, value: '' }
          : { name: pair.slice(0, colon).trim(), value: pair.slice(colon + 1).trim() };
      });
  }
}

function getPath(source: object, path: string): unknown {
  let value: unknown = source;
  for (const key of path.split('.')) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.');
  let node = target;
  for (const key of keys.slice(0, -1)) {
    node[key] ??= {};
    node = node[key] as Record<string, unknown>;
  }
  node[keys[keys.length - 1] as string] = value;
}

/**
 * Reads the options of the table from environment variables. Values that do not parse are
 * reported in `problems` (naming the variable), never silently replaced by a default.
 */
export function optionsFromEnv(env: Readonly<Record<string, string | undefined>>): {
  options: ProxyOptions;
  problems: string[];
} {
  const result: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const spec of options) {
    const name = spec.env.find(
      (candidate) => env[candidate] !== undefined && env[candidate] !== '',
    );
    if (name === undefined) continue;
    const parsed = parseEnv(spec, name, env[name] as string);
    if (parsed instanceof Error) problems.push(parsed.message);
    else setPath(result, spec.option, parsed);
  }
  return { options: result as ProxyOptions, problems };
}

function label(spec: OptionSpec): string {
  return spec.env.length > 0 ? `${spec.option} (${spec.env.join(' or ')})` : spec.option;
}

/** Checks one in-code (or env-parsed) value and returns it in its domain type. */
function check(spec: OptionSpec, value: unknown, problems: string[]): unknown {
  const bad = (expected: string) => {
    problems.push(`${label(spec)} must be ${expected}`);
    return undefined;
  };
  switch (spec.type) {
    case 'url': {
      if (value instanceof URL) return value;
      if (typeof value !== 'string') return bad('a URL');
      try {
        return new URL(value);
      } catch {
        return bad(`a URL, got "${value}"`);
      }
    }
    case 'string':
    case 'secret':
      return typeof value === 'string' ? value : bad('a string');
    case 'object':
      return value;
    case 'base-path': {
      if (typeof value !== 'string') return bad('a string');
      const trimmed = value.trim().replace(/\/+$/, '');
      if (trimmed === '') return '';
      return trimmed.startsWith('/') ? trimmed : `/${trimmed}`;
    }
    case 'list':
    case 'secret-list':
      if (typeof value === 'string') return splitList(value);
      if (Array.isArray(value) && value.every((item) => typeof item === 'string')) return value;
      return bad('a list of strings');
    case 'paths':
      return Array.isArray(value) ? value : bad('a list');
    case 'ms':
      return Number.isInteger(value) && (value as number) >= 0
        ? value
        : bad('a whole number of milliseconds');
    case 'seconds':
      return Number.isInteger(value) && (value as number) >= 0
        ? value
        : bad('a whole number of seconds');
    case 'bytes':
      return Number.isInteger(value) && (value as number) > 0
        ? value
        : bad('a positive number of bytes');
    case 'budget':
      return Number.isInteger(value) && (value as number) >= 0
        ? value
        : bad('a whole number of bytes (0 for none)');
    case 'count':
      return Number.isInteger(value) && (value as number) >= 0
        ? value
        : bad('a whole number (0 for no limit)');
    case 'length':
      return Number.isInteger(value) && (value as number) > 0
        ? value
        : bad('a positive whole number of characters');
    case 'port':
      return Number.isInteger(value) && (value as number) >= 0 && (value as number) <= 65535
        ? value
        : bad(`a port number (0-65535), got ${String(value)}`);
    case 'status':
      return Number.isInteger(value) && (value as number) >= 200 && (value as number) <= 299
        ? value
        : bad(`a 2xx status code, got ${String(value)}`);
    case 'boolean':
      return typeof value === 'boolean' ? value : bad('true or false');
    case 'level':
      return LOG_LEVELS.includes(value as LogLevel)
        ? value
        : bad(`one of ${LOG_LEVELS.join(', ')}, got "${String(value)}"`);
    case 'trust-proxy': {
      if (typeof value === 'boolean') return value;
      if (typeof value === 'number' && Number.isInteger(value) && value >= 0) return value;
      const list = typeof value === 'string' ? splitList(value) : value;
      if (!Array.isArray(list)) return bad('true, false, a hop count, or IP/CIDR addresses');
      const invalid = list.filter((item) => typeof item !== 'string' || !isTrustedProxyEntry(item));
      if (invalid.length > 0)
        return bad(`true, false or IP/CIDR addresses, got "${invalid.join(', ')}"`);
      return list;
    }
    case 'tags': {
      if (!Array.isArray(value)) return bad('a list of tagName:tagValue pairs');
      const invalid = value.filter(
        (tag) =>
          typeof tag?.name !== 'string' ||
          tag.name === '' ||
          typeof tag.value !== 'string' ||
          tag.value === '',
      );
      if (invalid.length > 0) return bad('a list of tagName:tagValue pairs (both parts non-empty)');
      return value;
    }
  }
}

/**
 * Whether `trustProxy` lets a forwarded address be the request address: then the request address
 * is the caller's, and a `remoteAddress` the caller sends is not needed (nor trusted) by default.
 */
function trustsForwardedAddress(trustProxy: TrustProxy): boolean {
  if (typeof trustProxy === 'boolean') return trustProxy;
  if (typeof trustProxy === 'number') return trustProxy > 0;
  return trustProxy.length > 0;
}

const POSITIVE_MS = new Set(['refreshInterval', 'upstreamTimeoutMs']);

function defaultInstanceId(): string {
  return `flags-proxy-${hostname()}-${process.pid}`;
}

/**
 * Validates in-code options (already merged with environment values) against the option table
 * and returns the frozen configuration; throws a `ConfigError` listing every problem.
 */
export function resolveConfig(
  input: ProxyOptions,
  envProblems: readonly string[] = [],
): ProxyConfig {
  const problems = [...envProblems];
  const values = new Map<string, unknown>();
  for (const spec of options) {
    if (spec.type === 'object') continue;
    let value = getPath(input, spec.option);
    if (value === undefined && spec.default !== undefined)
      value = parseEnv(spec, 'default', spec.default);
    if (value === undefined) continue;
    const checked = check(spec, value, problems);
    if (checked !== undefined) values.set(spec.option, checked);
  }
  for (const name of POSITIVE_MS) {
    if (values.get(name) === 0) {
      const spec = options.find((row) => row.option === name) as OptionSpec;
      problems.push(`${label(spec)} must be greater than 0`);
    }
  }
  const keys = [
    ...((values.get('clientKeys') as string[] | undefined) ?? []),
    ...((values.get('proxySecrets') as string[] | undefined) ?? []),
  ];
  if (!values.has('flagsUrl')) problems.push('You must specify the flagsUrl option (FLAGS_URL)');
  if (!values.has('flagsApiToken'))
    problems.push('You must specify the flagsApiToken option (FLAGS_API_TOKEN)');
  if (keys.length === 0)
    problems.push('You must specify the clientKeys option (FLAGS_PROXY_CLIENT_KEYS)');
  const enrichers = values.get('expCustomEnrichers') as unknown[] | undefined;
  if (enrichers?.some((item) => typeof item !== 'function' && typeof item !== 'string')) {
    problems.push('expCustomEnrichers must list functions or file paths');
  }
  const strategies = values.get('customStrategies') as unknown[] | undefined;
  if (
    strategies?.some(
      (item) => typeof item !== 'string' && (typeof item !== 'object' || item === null),
    )
  ) {
    problems.push('customStrategies must list strategy objects or file paths');
  }
  if (problems.length > 0) throw new ConfigError(problems);

  const get = <T>(key: string): T => values.get(key) as T;
  const flagsUrl = new URL(get<URL>('flagsUrl'));
  if (!flagsUrl.pathname.endsWith('/')) flagsUrl.pathname += '/';
  const origins = get<string[]>('cors.origin');
  const allowed = values.get('cors.allowedHeaders') as string[] | undefined;
  const cors: ResolvedCors = {
    origin: origins.includes('*') ? '*' : new Set(origins),
    methods: get<string[]>('cors.methods').join(', '),
    allowedHeaders: allowed?.join(', '),
    exposedHeaders: get<string[]>('cors.exposedHeaders').join(', '),
    credentials: get<boolean>('cors.credentials'),
    maxAge: get<number>('cors.maxAge'),
    preflightContinue: get<boolean>('cors.preflightContinue'),
    optionsSuccessStatus: get<number>('cors.optionsSuccessStatus'),
  };
  const bootstrapUrl = values.get('expBootstrap.url') as URL | undefined;
  return Object.freeze({
    flagsUrl,
    flagsApiToken: get<string>('flagsApiToken'),
    clientKeys: Object.freeze([...new Set(keys)]),
    port: get<number>('port'),
    host: get<string>('host'),
    proxyBasePath: get<string>('proxyBasePath'),
    flagsAppName: get<string>('flagsAppName'),
    flagsInstanceId: (values.get('flagsInstanceId') as string | undefined) ?? defaultInstanceId(),
    refreshInterval: get<number>('refreshInterval'),
    metricsInterval: get<number>('metricsInterval'),
    metricsJitter: get<number>('metricsJitter'),
    upstreamTimeoutMs: get<number>('upstreamTimeoutMs'),
    environment: values.get('environment') as string | undefined,
    projectName: values.get('projectName') as string | undefined,
    namePrefix: values.get('namePrefix') as string | undefined,
    tags: (values.get('tags') as TagFilter[] | undefined) ?? [],
    logger: input.logger,
    useJsonLogger: get<boolean>('useJsonLogger'),
    logLevel: get<LogLevel>('logLevel'),
    customStrategies: (strategies ?? []) as (CustomStrategy | string)[],
    trustProxy: get<TrustProxy>('trustProxy'),
    ignoreCallerRemoteAddress:
      (values.get('ignoreCallerRemoteAddress') as boolean | undefined) ??
      trustsForwardedAddress(get<TrustProxy>('trustProxy')),
    clientKeysHeaderName: get<string>('clientKeysHeaderName').toLowerCase(),
    storageProvider: input.storageProvider,
    backupDir: values.get('backupDir') as string | undefined,
    redisUrl: values.get('redisUrl') as URL | undefined,
    redisKeyPrefix: get<string>('redisKeyPrefix'),
    enableOAS: get<boolean>('enableOAS'),
    enableAllEndpoint: get<boolean>('enableAllEndpoint'),
    maxBodyBytes: get<number>('maxBodyBytes'),
    answerCacheBytes: get<number>('answerCacheBytes'),
    reportsPerMinute: get<number>('reportsPerMinute'),
    maxContextValueLength: get<number>('maxContextValueLength'),
    cors,
    rejectUnauthorized: get<boolean>('httpOptions.rejectUnauthorized'),
    httpProxy: values.get('httpOptions.httpProxy') as URL | undefined,
    httpsProxy: values.get('httpOptions.httpsProxy') as URL | undefined,
    noProxy: (values.get('httpOptions.noProxy') as string[] | undefined) ?? [],
    bootstrap:
      bootstrapUrl === undefined
        ? undefined
        : {
            url: bootstrapUrl,
            authorization: values.get('expBootstrap.urlHeaders.Authorization') as
              | string
              | undefined,
          },
    serverSideTokens: (values.get('expServerSideSdkConfig.tokens') as string[] | undefined) ?? [],
    expCustomEnrichers: (enrichers ?? []) as (ContextEnricher | string)[],
  });
}

function mergeOptions(
  base: Record<string, unknown>,
  over: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    if (value === undefined) continue;
    const current = out[key];
    const plain = (v: unknown) =>
      v !== null &&
      typeof v === 'object' &&
      !Array.isArray(v) &&
      Object.getPrototypeOf(v) === Object.prototype;
    out[key] =
      plain(current) && plain(value)
        ? mergeOptions(current as Record<string, unknown>, value as Record<string, unknown>)
        : value;
  }
  return out;
}

/** Environment variables first, in-code options win; validated as a whole. */
export function loadConfig(
  env: Readonly<Record<string, string | undefined>>,
  overrides: ProxyOptions = {},
): ProxyConfig {
  const fromEnv = optionsFromEnv(env);
  const merged = mergeOptions(
    fromEnv.options as Record<string, unknown>,
    overrides as Record<string, unknown>,
  ) as ProxyOptions;
  return resolveConfig(merged, fromEnv.problems);
}

export type { CorsOptions };
