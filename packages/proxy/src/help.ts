import { helpText } from '@flags/config';
import { proxyConfig } from './config/options.js';
import { offlineConfig } from './offline/options.js';
import { DEFAULT_PROBE_TIMEOUT_MS, DEFAULT_PROBE_URL, PROBES } from './probe.js';

/** `flags-proxy --help`: serving and the probes, then every option from the option schema. */
export function help(): string {
  const serve = {
    usage: '[edge] [--<variable> <value> …]',
    doc: 'Serves: what the command does without a command (`edge`, as Unleash Edge’s image runs it, is the same). Any variable below may be given as an option, its name in kebab case as Unleash Edge takes them: `--upstream-url <url>` (or `--upstream-url=<url>`) for UPSTREAM_URL, a bare `--strict` for STRICT=true.',
  };
  const offline = {
    usage:
      'offline --bootstrap-file <file> --client-tokens <tokens> [--frontend-tokens <tokens>] [--reload-interval <s>] [--<variable> <value> …]',
    doc: 'Serves the flags of a file, with no upstream, as Unleash Edge’s offline mode (BOOTSTRAP_FILE, CLIENT_TOKENS, FRONTEND_TOKENS, RELOAD_INTERVAL below); the other variables apply as when serving, the upstream ones aside.',
  };
  const probes = Object.entries(PROBES).map(([name, { path, passed }]) => ({
    usage: `${name} [--url <base>] [--timeout <ms>]`,
    doc: `Asks a running proxy whether it is ${passed}: exits 0 when GET <base>${path} answers 200 within the timeout, else 1, and prints one line (for container probes without curl; --url defaults to ${DEFAULT_PROBE_URL}, --timeout to ${DEFAULT_PROBE_TIMEOUT_MS} ms).`,
  }));
  return helpText(
    'flags-proxy',
    'evaluates feature flags for client-side apps, Unleash Proxy and Unleash Edge compatible.',
    [...proxyConfig.options, ...offlineConfig.options],
    [serve, offline, ...probes],
  );
}
