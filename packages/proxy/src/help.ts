import { helpText } from '@flags/config';
import { EDGE_PROFILE_COLUMN, proxyConfig } from './config/options.js';
import { offlineConfig } from './offline/options.js';
import { DEFAULT_PROBE_TIMEOUT_MS, DEFAULT_PROBE_URL, PROBES } from './probe.js';

/** The usage line: Unleash Edge 20's command line, and the two options that start nothing. */
const SYNOPSIS = '[OPTIONS] [edge|offline|health|ready] [OPTIONS] | -h|--help | -V|--version';

/** The first screen of `--help`: one example per way of running it. */
const EXAMPLES = [
  {
    doc: 'As Unleash Edge: sync from an upstream (its root URL) with one client token per environment, serve on port 3063',
    command:
      "flags-proxy edge -u https://unleash.example.com -t '*:production.<secret>' -t '*:development.<secret>'",
  },
  {
    doc: 'As Unleash Proxy: its variables (UNLEASH_* work too), frontend SDKs sending a client key, port 3000',
    command:
      "FLAGS_URL=https://unleash.example.com/api FLAGS_API_TOKEN='*:production.<secret>' FLAGS_PROXY_CLIENT_KEYS=<key> flags-proxy",
  },
  {
    doc: 'With Unleash Edge’s variables, as its container image and Helm chart set them',
    command:
      "UPSTREAM_URL=http://flags-server:4242 TOKENS='*:production.<secret>' flags-proxy edge",
  },
  {
    doc: 'Offline: the flags of a file, no upstream, for SDKs using these tokens',
    command: "flags-proxy offline -b features.json -c '*:production.<secret>'",
  },
  {
    doc: 'A container health check: exit 0 when the proxy beside it answers, else 1',
    command: 'flags-proxy health -e http://localhost:3063',
  },
];

/** `flags-proxy --help`: usage and examples, the commands, then every option from the schema. */
export function help(): string {
  const serve = {
    usage: '[OPTIONS]',
    doc: 'Serves with Unleash Proxy’s defaults (port 3000, …). Any variable below may be given as an option, its name in kebab case: `--flags-url <url>` (or `--flags-url=<url>`) for FLAGS_URL, a bare `--strict` for STRICT=true; so may Unleash Edge’s options (next line).',
  };
  const edge = {
    usage: '[OPTIONS] edge [OPTIONS]',
    doc: 'Serves with Unleash Edge’s defaults (port 3063 on ::, strict token scope, /all served, compression, 15 s refresh: the "edge" defaults below), and takes Unleash Edge 20’s command line: its short and long options (`-u <url> -t <token> -t <token>`, `--upstream-url <url>`), lists repeated or comma-separated, options of the server (`-p`, `-i`, `--tls-*`) before `edge`. Edge options flags-proxy does not implement stop the start, naming what to do; those Edge 20 itself ignores (WORKERS, SENTRY_*, …) are accepted with a warning. docs/migrate-from-unleash-edge.md lists every Edge option and how it is taken.',
  };
  const offline = {
    usage: '[OPTIONS] offline -b <file> -c <tokens> [-f <tokens>] [-r <s>] [OPTIONS]',
    doc: 'Serves the flags of a file, with no upstream, as Unleash Edge’s offline mode (BOOTSTRAP_FILE, CLIENT_TOKENS, FRONTEND_TOKENS, RELOAD_INTERVAL below), with the "edge" defaults; the other variables apply as when serving, the upstream ones aside.',
  };
  const probes = Object.entries(PROBES).map(([name, { path, passed }]) => ({
    usage: `${name} [-e|--edge-url|--url <base>] [-c|--ca-certificate-file <pem>] [--timeout <ms>]`,
    doc: `Asks a running proxy whether it is ${passed}: exits 0 when GET <base>${path} answers 200 within the timeout, else 1, and prints one line (for container probes without curl). <base> defaults to EDGE_URL, else ${DEFAULT_PROBE_URL} (the port of PORT or PROXY_PORT when set); the CA file (or CA_CERTIFICATE_FILE) is trusted over HTTPS; --timeout defaults to ${DEFAULT_PROBE_TIMEOUT_MS} ms.`,
  }));
  return helpText({
    command: 'flags-proxy',
    synopsis: SYNOPSIS,
    summary:
      'evaluates feature flags for client-side apps, Unleash Proxy and Unleash Edge compatible.',
    examples: EXAMPLES,
    subcommands: [serve, edge, offline, ...probes],
    rows: [...proxyConfig.options, ...offlineConfig.options],
    profile: EDGE_PROFILE_COLUMN,
  });
}
