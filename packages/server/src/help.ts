import { helpText } from '@flags/config';
import { SERVER_SYNOPSIS } from './config/command-line.js';
import { serverConfig } from './config/options.js';
import { DEFAULT_SERVER_PROBE_TIMEOUT_MS, SERVER_PROBES } from './probe.js';

/** `flags-server --help`: the usage line and examples, then every option from the option schema. */
export function help(): string {
  return helpText({
    command: 'flags-server',
    synopsis: SERVER_SYNOPSIS,
    summary:
      'feature-flag storage, Unleash-compatible client API and admin API, and the web UI. It takes no other options: every setting is an environment variable (below).',
    examples: [
      {
        doc: 'Try it: the web UI and the APIs on http://localhost:4242, data in an embedded PGlite database in ./data',
        command: 'flags-server',
      },
      {
        doc: 'On PostgreSQL, which several flags-server processes can share',
        command: 'DATABASE_URL=postgres://flags:<password>@db:5432/flags flags-server',
      },
      {
        doc: 'With an admin token (scripts, the first login) and a client token for proxies and SDKs, created at start',
        command:
          "FLAGS_ADMIN_TOKENS='*:*.<secret>' FLAGS_CLIENT_TOKENS='*:production.<secret>' flags-server",
      },
      {
        doc: 'Behind one load balancer that users reach at https://flags.example.com',
        command: 'PUBLIC_URL=https://flags.example.com TRUST_PROXY=1 flags-server',
      },
      {
        doc: 'Data in /var/lib/flags, port 8080, logs for a terminal',
        command: 'DATA_DIR=/var/lib/flags PORT=8080 JSON_LOGGER=false flags-server',
      },
    ],
    subcommands: [
      ...Object.entries(SERVER_PROBES).map(([name, { path, passed }]) => ({
        usage: `${name} [--url <base>] [--timeout <ms>]`,
        doc: `Asks a running flags-server whether it is ${passed}: exits 0 when GET <base>${path} answers 200 within the timeout, else 1, and prints one line (for container health checks without curl). <base> defaults to the server beside it: http://127.0.0.1 on the port of SERVER_PORT or PORT (4242), or the address of SERVER_HOST when it names one; --timeout defaults to ${DEFAULT_SERVER_PROBE_TIMEOUT_MS} ms. /health answers as soon as the server listens, /ready once it has loaded from its database.`,
      })),
      {
        usage:
          'migrate from-unleash --url <URL> --token <admin token> [--database <URL>] [--dry-run]',
        doc: "Copies a whole unleash-server (6, 7 or 8) into this server's database: flags in every environment, segments, context fields, API tokens with their secrets, users (with --database, their passwords). A second run copies only what changed; --dry-run writes nothing and exits 2 when something would change. `flags-server migrate --help` tells more.",
      },
      {
        usage: 'migrate verify --url <URL> --token <admin token> [--flags-url <URL>]',
        doc: "Compares what SDKs get from unleash-server and from this server with each of unleash-server's client and frontend tokens; exits 1 on any difference.",
      },
    ],
    rows: serverConfig.options,
  });
}
