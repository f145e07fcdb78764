/**
 * Every option of Unleash Edge 20's command line (its `unleash-edge-cli` crate), and how flags-proxy
 * takes each: the one source for the command-line parser (`command-line.ts`), the start-up check
 * of the environment (`edgeVariableFindings`), the README's table of Edge options and its test.
 *
 * Where Edge takes an option:
 * - `top`: before the subcommand only (`flags-proxy -p 3063 edge …`);
 * - `global`: before or after the subcommand;
 * - `edge`, `offline`, `probe`: after that subcommand (`probe`: `health` and `ready`).
 * Short options mean different things in different places (`-p` is the port before `edge` and the
 * pretrusted tokens after it), so each is looked up where it stands.
 */
export type EdgeScope = 'top' | 'global' | 'edge' | 'offline' | 'probe';

/** How flags-proxy takes an Edge option. */
export type EdgeHandling =
  /** Read as the option(s) of ours that read its variable (the README table names them). */
  | { readonly kind: 'supported' }
  /** Edge 20 takes it and does nothing with it: accepted, with one warning naming it. */
  | { readonly kind: 'ignored'; readonly why: string }
  /** Something flags-proxy does not do: the start stops, saying what to do instead. */
  | { readonly kind: 'refused'; readonly instead: string };

export interface EdgeOption {
  /** The long option, without `--`. */
  readonly long: string;
  /** The environment variable Edge reads it from; none for options Edge takes only as arguments. */
  readonly env: string | undefined;
  readonly short?: string;
  readonly scope: EdgeScope;
  /** A switch: given alone (`--tls-enable`), no value follows it. */
  readonly flag?: true;
  /** Takes several values, repeated (`-t a -t b`) or comma-separated. */
  readonly list?: true;
  readonly handling: EdgeHandling;
}

const supported = { kind: 'supported' } as const;
const ignored = (why: string) => ({ kind: 'ignored', why }) as const;
const refused = (instead: string) => ({ kind: 'refused', instead }) as const;

/** `upstream-url` → `UPSTREAM_URL`: how Edge names an option's variable. */
export function edgeVariable(long: string): string {
  return long.toUpperCase().replaceAll('-', '_');
}

type Spec = Omit<EdgeOption, 'long' | 'env'> & { readonly env?: string | null };

function edgeOption(long: string, spec: Spec): EdgeOption {
  const env = spec.env === null ? undefined : (spec.env ?? edgeVariable(long));
  return { ...spec, long, env };
}

const EDGE_20_IGNORES = 'Unleash Edge 20 takes it and no longer uses it';

export const EDGE_OPTIONS: readonly EdgeOption[] = [
  // Before the subcommand (HttpServerArgs, TlsOptions, CliArgs).
  edgeOption('port', { short: 'p', scope: 'top', handling: supported }),
  edgeOption('interface', { short: 'i', scope: 'top', handling: supported }),
  edgeOption('tls-enable', { scope: 'top', flag: true, handling: supported }),
  edgeOption('tls-server-key', { scope: 'top', handling: supported }),
  edgeOption('tls-server-cert', { scope: 'top', handling: supported }),
  edgeOption('tls-server-port', { scope: 'top', handling: supported }),
  edgeOption('redirect-http-to-https', { scope: 'top', flag: true, handling: supported }),
  edgeOption('edge-request-timeout', { scope: 'top', handling: ignored(EDGE_20_IGNORES) }),
  edgeOption('edge-keepalive-timeout', { scope: 'top', handling: ignored(EDGE_20_IGNORES) }),
  // Anywhere.
  edgeOption('base-path', { scope: 'global', handling: supported }),
  edgeOption('cors-origin', { scope: 'global', list: true, handling: supported }),
  edgeOption('cors-allowed-headers', { scope: 'global', list: true, handling: supported }),
  edgeOption('cors-max-age', { scope: 'global', handling: supported }),
  edgeOption('cors-exposed-headers', { scope: 'global', list: true, handling: supported }),
  edgeOption('cors-methods', { scope: 'global', list: true, handling: supported }),
  edgeOption('allow-list', { scope: 'global', list: true, handling: supported }),
  edgeOption('deny-list', { scope: 'global', list: true, handling: supported }),
  edgeOption('workers', {
    short: 'w',
    scope: 'global',
    handling: ignored(
      `${EDGE_20_IGNORES}; flags-proxy is one process: run more of them to use more cores`,
    ),
  }),
  edgeOption('instance-id', { scope: 'global', handling: supported }),
  edgeOption('client-id', {
    scope: 'global',
    handling: ignored('Unleash Edge only uses it as a label of its own telemetry'),
  }),
  edgeOption('app-name', { short: 'a', scope: 'global', handling: supported }),
  edgeOption('markdown-help', {
    env: null,
    scope: 'global',
    flag: true,
    handling: refused(
      'run `flags-proxy --help`, and see docs/configuration/proxy.md for the options as a table',
    ),
  }),
  edgeOption('trust-proxy', { scope: 'global', flag: true, handling: supported }),
  edgeOption('proxy-trusted-servers', { scope: 'global', list: true, handling: supported }),
  edgeOption('disable-all-endpoint', { scope: 'global', flag: true, handling: supported }),
  edgeOption('log-format', { short: 'l', scope: 'global', handling: supported }),
  edgeOption('edge-auth-header', { scope: 'global', handling: supported }),
  edgeOption('upstream-auth-header', { scope: 'global', handling: supported }),
  edgeOption('token-header', { scope: 'global', handling: supported }),
  edgeOption('disable-metrics-batch-endpoint', {
    scope: 'global',
    flag: true,
    handling: supported,
  }),
  edgeOption('disable-metrics-endpoint', { scope: 'global', flag: true, handling: supported }),
  edgeOption('disable-features-endpoint', { scope: 'global', flag: true, handling: supported }),
  edgeOption('disable-tokens-endpoint', { scope: 'global', flag: true, handling: supported }),
  edgeOption('disable-instance-data-endpoint', {
    scope: 'global',
    flag: true,
    handling: supported,
  }),
  edgeOption('sentry-dsn', { scope: 'global', handling: ignored(EDGE_20_IGNORES) }),
  edgeOption('sentry-tracing-rate', { scope: 'global', handling: ignored(EDGE_20_IGNORES) }),
  edgeOption('sentry-debug', { scope: 'global', flag: true, handling: ignored(EDGE_20_IGNORES) }),
  edgeOption('sentry-enable-logs', {
    scope: 'global',
    flag: true,
    handling: ignored(EDGE_20_IGNORES),
  }),
  edgeOption('datadog-url', { scope: 'global', handling: ignored(EDGE_20_IGNORES) }),
  edgeOption('otel-exporter-otlp-endpoint', {
    scope: 'global',
    handling: ignored(
      'open-source Unleash Edge 20 exports no OpenTelemetry traces (Enterprise only)',
    ),
  }),
  edgeOption('otel-exporter-otlp-protocol', {
    scope: 'global',
    handling: ignored(
      'open-source Unleash Edge 20 exports no OpenTelemetry traces (Enterprise only)',
    ),
  }),
  edgeOption('edge-hosting', {
    scope: 'global',
    handling: ignored('Unleash sets it for the Edge it hosts; it means nothing elsewhere'),
  }),
  // `edge`.
  edgeOption('upstream-url', { short: 'u', scope: 'edge', handling: supported }),
  edgeOption('backup-folder', { short: 'b', scope: 'edge', handling: supported }),
  edgeOption('metrics-interval-seconds', { short: 'm', scope: 'edge', handling: supported }),
  edgeOption('features-refresh-interval-seconds', {
    short: 'f',
    scope: 'edge',
    handling: supported,
  }),
  edgeOption('token-revalidation-interval-seconds', { scope: 'edge', handling: supported }),
  edgeOption('tokens', { short: 't', scope: 'edge', list: true, handling: supported }),
  edgeOption('pretrusted-tokens', { short: 'p', scope: 'edge', list: true, handling: supported }),
  edgeOption('custom-client-headers', {
    short: 'H',
    scope: 'edge',
    list: true,
    handling: supported,
  }),
  edgeOption('skip-ssl-verification', {
    short: 's',
    scope: 'edge',
    flag: true,
    handling: supported,
  }),
  edgeOption('pkcs8-client-certificate-file', { scope: 'edge', handling: supported }),
  edgeOption('pkcs8-client-key-file', { scope: 'edge', handling: supported }),
  edgeOption('pkcs12-identity-file', { scope: 'edge', handling: supported }),
  edgeOption('pkcs12-passphrase', { scope: 'edge', handling: supported }),
  edgeOption('pem-cert-file', { scope: 'edge', handling: supported }),
  edgeOption('upstream-certificate-file', { scope: 'edge', handling: supported }),
  edgeOption('upstream-request-timeout', { scope: 'edge', handling: supported }),
  edgeOption('upstream-socket-timeout', { scope: 'edge', handling: supported }),
  edgeOption('redis-url', { scope: 'edge', list: true, handling: supported }),
  edgeOption('redis-mode', { scope: 'edge', handling: supported }),
  edgeOption('redis-password', { scope: 'edge', handling: supported }),
  edgeOption('redis-username', { scope: 'edge', handling: supported }),
  edgeOption('redis-port', { scope: 'edge', handling: supported }),
  edgeOption('redis-host', { scope: 'edge', handling: supported }),
  edgeOption('redis-secure', { scope: 'edge', flag: true, handling: supported }),
  edgeOption('redis-scheme', { scope: 'edge', handling: supported }),
  edgeOption('redis-read-connection-timeout-milliseconds', { scope: 'edge', handling: supported }),
  edgeOption('redis-write-connection-timeout-milliseconds', { scope: 'edge', handling: supported }),
  edgeOption('s3-bucket-name', { scope: 'edge', handling: supported }),
  edgeOption('s3-force-path-style', { scope: 'edge', flag: true, handling: supported }),
  edgeOption('consumption', {
    scope: 'edge',
    flag: true,
    handling: refused(
      'consumption metrics, an unannounced experiment of Unleash Edge, are not reported: remove it (usage metrics are sent as always)',
    ),
  }),
  edgeOption('client-keepalive-timeout', { scope: 'edge', handling: supported }),
  edgeOption('prometheus-remote-write-url', { scope: 'edge', handling: supported }),
  edgeOption('prometheus-push-interval', { scope: 'edge', handling: supported }),
  edgeOption('prometheus-username', { scope: 'edge', handling: supported }),
  edgeOption('prometheus-password', { scope: 'edge', handling: supported }),
  edgeOption('prometheus-user-id', { scope: 'edge', handling: ignored(EDGE_20_IGNORES) }),
  edgeOption('hostname', { scope: 'edge', handling: supported }),
  edgeOption('ec2-instance-id', {
    scope: 'edge',
    handling: ignored('Unleash Edge only adds it to the instance data of the Edge Unleash hosts'),
  }),
  edgeOption('unleash-client-secret', {
    scope: 'edge',
    handling: refused(
      'tokens issued by the upstream for a client secret are an Unleash Enterprise feature: give client tokens in TOKENS',
    ),
  }),
  edgeOption('desired-environments', {
    scope: 'edge',
    list: true,
    handling: refused(
      'tokens issued by the upstream for a client secret are an Unleash Enterprise feature: give one client token per environment in TOKENS',
    ),
  }),
  edgeOption('desired-projects', {
    scope: 'edge',
    list: true,
    handling: refused(
      'tokens issued by the upstream for a client secret are an Unleash Enterprise feature: give client tokens of those projects in TOKENS',
    ),
  }),
  edgeOption('delta', {
    scope: 'edge',
    flag: true,
    handling: ignored(
      'delta polling is Unleash Enterprise Edge’s; flags-proxy streams changes where the upstream offers it (STREAMING), else polls',
    ),
  }),
  edgeOption('streaming', { scope: 'edge', flag: true, handling: supported }),
  // `offline`.
  edgeOption('bootstrap-file', { short: 'b', scope: 'offline', handling: supported }),
  edgeOption('client-tokens', { short: 'c', scope: 'offline', list: true, handling: supported }),
  edgeOption('frontend-tokens', { short: 'f', scope: 'offline', list: true, handling: supported }),
  edgeOption('reload-interval', { short: 'r', scope: 'offline', handling: supported }),
  // `health`, `ready`.
  edgeOption('edge-url', { short: 'e', scope: 'probe', handling: supported }),
  edgeOption('ca-certificate-file', { short: 'c', scope: 'probe', handling: supported }),
];

/** What the environment's Edge variables that flags-proxy does not use call for. */
export interface EdgeFindings {
  /** One line naming the variables accepted and ignored (as Edge 20 ignores them), if any. */
  readonly warnings: readonly string[];
  /** One line per variable that stops the start. */
  readonly refusals: readonly string[];
}

/**
 * The Edge variables set (not empty) in `env` that flags-proxy does not use: a warning for those
 * Edge 20 ignores too, a refusal for the others, so that none is ignored without a word. Each is
 * named as `written` on the command line (`--consumption`), else by its variable.
 */
export function edgeVariableFindings(
  env: Readonly<Record<string, string | undefined>>,
  written: Readonly<Record<string, string>> = {},
): EdgeFindings {
  const set = EDGE_OPTIONS.filter(
    (option) => option.env !== undefined && (env[option.env] ?? '') !== '',
  );
  // As the operator wrote it: `--consumption` on the command line, CONSUMPTION in the environment.
  const named = (option: EdgeOption) => written[option.env as string] ?? (option.env as string);
  const ignoredOnes = set.filter((option) => option.handling.kind === 'ignored');
  const warnings =
    ignoredOnes.length === 0
      ? []
      : [
          `ignored, as Unleash Edge 20 ignores them: ${ignoredOnes
            .map((option) => `${named(option)} (${(option.handling as { why: string }).why})`)
            .join('; ')}`,
        ];
  const refusals = set.flatMap((option) =>
    option.handling.kind === 'refused'
      ? [
          `${named(option)} is an Unleash Edge option flags-proxy does not take: ${option.handling.instead}`,
        ]
      : [],
  );
  return { warnings, refusals };
}

/** Where an Edge option may be written, in the README's words. */
const WHERE: Readonly<Record<EdgeScope, string>> = {
  top: 'before the subcommand',
  global: 'anywhere',
  edge: 'after `edge`',
  offline: 'after `offline`',
  probe: 'after `health` or `ready`',
};

/**
 * The README's table of every Edge 20 option: how it is written, where, and how flags-proxy takes
 * it; a supported one names the options of ours that read its variable (`readers`).
 */
export function edgeOptionsMarkdown(readers: (variable: string) => readonly string[]): string {
  const lines = EDGE_OPTIONS.map((option) => {
    const written = [
      `\`--${option.long}\``,
      ...(option.short === undefined ? [] : [`\`-${option.short}\``]),
    ].join(', ');
    const shape = option.flag ? 'switch' : option.list ? 'list' : 'value';
    const env = option.env === undefined ? '–' : `\`${option.env}\``;
    const handling = option.handling;
    const how =
      handling.kind === 'supported'
        ? `Supported: ${
            option.env === undefined
              ? ''
              : readers(option.env)
                  .map((reader) => `\`${reader}\``)
                  .join(', ')
          }`
        : handling.kind === 'ignored'
          ? `Accepted and ignored, with a warning: ${handling.why}.`
          : `Refused (the start stops): ${handling.instead}.`;
    return `| ${written} | ${env} | ${WHERE[option.scope]}, ${shape} | ${how} |`;
  });
  return [
    '| Unleash Edge option | Variable | Written | flags-proxy |',
    '|---|---|---|---|',
    ...lines,
  ].join('\n');
}
