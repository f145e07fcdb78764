import { helpText } from '@flags/config';
import { SERVER_SYNOPSIS } from './config/command-line.js';
import { serverConfig } from './config/options.js';

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
    rows: serverConfig.options,
  });
}
