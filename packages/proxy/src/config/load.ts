import { hostname } from 'node:os';
import { ConfigError, type Environment, type Loaded } from '@flags/config';
import { resolveCors, trustsForwardedAddress } from '@flags/serving';
import { backupTargets } from './backup.js';
import { type ProxyMode, type ProxyOptions, proxyConfig, type proxySchema } from './options.js';
import { serverTlsOf, upstreamTlsOf } from './tls-files.js';

export { ConfigError };

type Options = Loaded<typeof proxySchema>;

function defaultInstanceId(): string {
  return `flags-proxy-${hostname()}-${process.pid}`;
}

/** `base/path/ ` → `/base/path`; empty stays empty. */
function basePath(raw: string): string {
  const trimmed = raw.trim().replace(/\/+$/, '');
  if (trimmed === '') return '';
  return trimmed.startsWith('/') ? trimmed : `/${trimmed}`;
}

/** The upstream API URL as a base for relative paths (`…/api/`). */
function upstreamBase(raw: string | URL): URL {
  const base = new URL(raw);
  if (!base.pathname.endsWith('/')) base.pathname += '/';
  return base;
}

/**
 * The loaded options in the domain types the proxy runs with (URLs as `URL`, keys merged and
 * deduplicated, derived defaults), frozen. The names are the ones the proxy has always used.
 */
function resolve(options: Options, mode: ProxyMode, named: Named) {
  const bootstrapUrl = options.expBootstrap.url;
  return Object.freeze({
    /** Whose defaults the options took: Unleash Proxy's (`proxy`) or Unleash Edge's (`edge`). */
    mode,
    flagsUrl: upstreamBase(options.flagsUrl),
    /**
     * The upstream URL's option as the operator wrote it (`-u (--upstream-url)`, `UPSTREAM_URL`,
     * `UNLEASH_URL`, `FLAGS_URL`, `flagsUrl`), for messages that name the fix; `addsApi`: it is
     * the server's root URL, `/api` added (Edge's `UPSTREAM_URL`).
     */
    flagsUrlWritten: Object.freeze({ name: named.flagsUrl, addsApi: named.addsApi }),
    /** The startup tokens' option as the operator wrote it (`-t (--tokens)`, `TOKENS`, …). */
    flagsApiTokenWritten: named.flagsApiToken,
    /** The client tokens the proxy syncs with, one environment each (`flagsApiToken`, `TOKENS`). */
    startupTokens: Object.freeze([...new Set(options.flagsApiToken)]),
    /** The first startup token: the one of the environment plain client keys are served from. */
    flagsApiToken: options.flagsApiToken[0] as string,
    pretrustedTokens: Object.freeze([...new Set(options.pretrustedTokens ?? [])]),
    tokenRevalidationInterval: options.tokenRevalidationInterval,
    strictTokens: options.strictTokens,
    clientKeys: Object.freeze([
      ...new Set([...(options.clientKeys ?? []), ...(options.proxySecrets ?? [])]),
    ]),
    port: options.port,
    host: options.host,
    proxyBasePath: basePath(options.proxyBasePath),
    flagsAppName: options.flagsAppName,
    flagsInstanceId: options.flagsInstanceId ?? defaultInstanceId(),
    refreshInterval: options.refreshInterval,
    upstreamStreaming: options.upstreamStreaming,
    metricsInterval: options.metricsInterval,
    metricsJitter: options.metricsJitter,
    upstreamTimeoutMs: options.upstreamTimeoutMs,
    /** Extra headers of every upstream request, names in lower case. */
    customHeaders: customHeadersOf(options),
    /** The header carrying the client token upstream, in lower case. */
    upstreamAuthHeader: options.upstreamAuthHeader.toLowerCase(),
    environment: options.environment,
    projectName: options.projectName,
    namePrefix: options.namePrefix,
    tags: options.tags ?? [],
    logger: options.logger,
    /** Secrets public on purpose (a demo's): no short-secret warning for them. */
    publicSecrets: new Set(options.publicSecrets ?? []),
    useJsonLogger: options.useJsonLogger,
    logLevel: options.logLevel,
    customStrategies: options.customStrategies ?? [],
    trustProxy: options.trustProxy,
    compression: options.compression,
    allowList: Object.freeze([...options.allowList]),
    denyList: Object.freeze([...options.denyList]),
    /** The request address, never the caller's `remoteAddress`, goes into evaluation contexts. */
    ignoreCallerRemoteAddress:
      options.ignoreCallerRemoteAddress ?? trustsForwardedAddress(options.trustProxy),
    clientKeysHeaderName: options.clientKeysHeaderName.toLowerCase(),
    storageProvider: options.storageProvider,
    /** The backup store (`backupDir`, `redis` or `s3`; at most one is set). */
    ...backupTargets(options),
    enableOAS: options.enableOAS,
    enableAllEndpoint: options.enableAllEndpoint,
    enableTokensEndpoint: options.enableTokensEndpoint,
    enableFeaturesEndpoint: options.enableFeaturesEndpoint,
    enableMetricsBatchEndpoint: options.enableMetricsBatchEndpoint,
    enableInstanceDataEndpoint: options.enableInstanceDataEndpoint,
    enableMetricsEndpoint: options.enableMetricsEndpoint,
    /** Prometheus remote write; `undefined`: no push. */
    prometheusRemoteWrite:
      options.prometheusRemoteWriteUrl === undefined
        ? undefined
        : Object.freeze({
            url: new URL(options.prometheusRemoteWriteUrl),
            intervalMs: options.prometheusPushInterval,
            username: options.prometheusUsername,
            password: options.prometheusPassword,
            hostname: options.prometheusHostname,
          }),
    disabledFeatureAnswer: options.disabledFeatureAnswer,
    maxBodyBytes: options.maxBodyBytes,
    usageMaxPendingBytes: options.usageMaxPendingBytes,
    /** Longest time to receive a whole request, ms; 0: no limit. */
    requestTimeoutMs: options.requestTimeoutMs,
    /** Open connections per socket address (trusted proxies exempt); 0: no limit. */
    maxConnectionsPerAddress: options.maxConnectionsPerAddress,
    answerCacheBytes: options.answerCacheBytes,
    evaluationMemoBytes: options.evaluationMemoBytes,
    /** Registrations and usage reports per client address and minute; 0: no limit. */
    reportsPerMinute: options.reportsPerMinute,
    streamingMaxConnections: options.streamingMaxConnections,
    streamingMaxConnectionsPerAddress: options.streamingMaxConnectionsPerAddress,
    streamingMaxConnectionsPerToken: options.streamingMaxConnectionsPerToken,
    streamingKeepAliveMs: options.streamingKeepAliveMs,
    deltaEventsRetained: options.deltaEventsRetained,
    maxContextValueLength: options.maxContextValueLength,
    ofrepEventStreams: options.ofrepEventStreams,
    ofrepEventCredentialMs: options.ofrepEventCredentialMinutes * 60_000,
    ofrepEventSecret: options.ofrepEventSecret,
    ofrepEventStreamsMax: options.ofrepEventStreamsMax,
    ofrepEventStreamsMaxPerAddress: options.ofrepEventStreamsMaxPerAddress,
    ofrepEventStreamsMaxPerKey: options.ofrepEventStreamsMaxPerKey,
    ofrepInactivityDelaySec: options.ofrepInactivityDelaySec,
    cors: Object.freeze(resolveCors(options.cors)),
    rejectUnauthorized: options.httpOptions.rejectUnauthorized,
    httpProxy: urlOrNone(options.httpOptions.httpProxy),
    httpsProxy: urlOrNone(options.httpOptions.httpsProxy),
    noProxy: options.httpOptions.noProxy ?? [],
    /** TCP keep-alive delay of upstream connections, ms. */
    upstreamKeepAliveMs: options.httpOptions.keepAliveMs,
    /** The upstream's TLS: private authority and client identity, read at start. */
    upstreamTls: upstreamTlsOf(options.httpOptions),
    /** HTTPS listener (`tls.enable`), its files read at start; `undefined`: plain HTTP. */
    serverTls: serverTlsOf(options.tls),
    bootstrap:
      bootstrapUrl === undefined
        ? undefined
        : {
            url: new URL(bootstrapUrl),
            authorization: options.expBootstrap.urlHeaders.Authorization,
          },
    serverSideTokens: options.expServerSideSdkConfig.tokens ?? [],
    expCustomEnrichers: options.expCustomEnrichers ?? [],
  });
}

/**
 * The custom upstream headers, names in lower case. None may name the header that carries the
 * upstream token: Edge lets one replace the token, which sends one fixed credential for every
 * environment in its place; here the token header is the token's.
 */
function customHeadersOf(options: Options): Readonly<Record<string, string>> {
  const headers = Object.fromEntries(
    Object.entries(options.customHeaders ?? {}).map(([name, value]) => [name.toLowerCase(), value]),
  );
  const tokenHeader = options.upstreamAuthHeader.toLowerCase();
  if (Object.hasOwn(headers, tokenHeader))
    throw new ConfigError([
      `customHeaders (FLAGS_CUSTOM_HEADERS or CUSTOM_CLIENT_HEADERS) may not set "${tokenHeader}": it carries the upstream token (upstreamAuthHeader: UPSTREAM_AUTH_HEADER or TOKEN_HEADER); to send a gateway's credential in it, send the token in another header with UPSTREAM_AUTH_HEADER`,
    ]);
  return Object.freeze(headers);
}

function urlOrNone(value: string | URL | undefined): URL | undefined {
  return value === undefined ? undefined : new URL(value);
}

/** The validated, frozen configuration the app runs with. */
export type ProxyConfig = ReturnType<typeof resolve>;
export type CorsOptions = NonNullable<ProxyOptions['cors']>;
export type TrustProxy = ProxyConfig['trustProxy'];
export type TagFilter = ProxyConfig['tags'][number];

/**
 * Environment variables first, in-code options win; validated as a whole against the schema,
 * with `mode`'s defaults. Throws a `ConfigError` naming every problem.
 */
export function loadConfig(
  env: Environment,
  overrides: ProxyOptions = {},
  mode: ProxyMode = 'proxy',
  written: Readonly<Record<string, string>> = {},
): ProxyConfig {
  const environment = withTrustedServers(env);
  const loaded = proxyConfig.load(environment, overrides, mode, written);
  const url = writtenAs('flagsUrl', environment, overrides, written);
  return resolve(loaded, mode, {
    flagsUrl: url.name,
    addsApi: url.variable === 'UPSTREAM_URL',
    flagsApiToken: writtenAs('flagsApiToken', environment, overrides, written).name,
  });
}

/** How the operator named the options messages point at. */
interface Named {
  readonly flagsUrl: string;
  readonly addsApi: boolean;
  readonly flagsApiToken: string;
}

/**
 * Where an option's value came from, named as the operator wrote it: its in-code name, the
 * command line's option, or the variable read (the first set, as the loader reads them).
 */
function writtenAs(
  key: string,
  env: Environment,
  overrides: ProxyOptions,
  written: Readonly<Record<string, string>>,
): { name: string; variable?: string } {
  if ((overrides as Record<string, unknown>)[key] !== undefined) return { name: key };
  const row = proxyConfig.options.find((candidate) => candidate.key === key);
  for (const { name } of row?.variables ?? []) {
    const raw = env[name];
    if (raw !== undefined && raw !== '') return { name: written[name] ?? name, variable: name };
  }
  return { name: key };
}

/**
 * Unleash Edge's `PROXY_TRUSTED_SERVERS` narrows its `TRUST_PROXY=true` to those addresses, and
 * means nothing without it: read so (`trustProxy` then holds the addresses), never as trusting
 * every sender's `X-Forwarded-For`, which would let any caller choose its address.
 */
function withTrustedServers(env: Environment): Environment {
  const servers = env.PROXY_TRUSTED_SERVERS;
  if (servers === undefined || servers.trim() === '') return env;
  const { PROXY_TRUSTED_SERVERS: _, ...rest } = env;
  return rest.TRUST_PROXY?.trim().toLowerCase() === 'true'
    ? { ...rest, TRUST_PROXY: servers }
    : rest;
}
