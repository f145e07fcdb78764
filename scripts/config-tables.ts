// The configuration tables of the user docs, generated from the services' option schemas.
// `npm run docs:config` writes them; test/readme.test.ts fails when a page differs.
import { readFileSync } from 'node:fs';
import { markdownTable, type OptionRow, optionRows, replaceSection } from '@flags/config';
import {
  EDGE_PROFILE_COLUMN,
  edgeOptionsMarkdown,
  edgeVariableReaders,
  offlineSchema,
  proxySchema,
} from '@flags/proxy';
import { serverSchema } from '@flags/server';

const proxy = optionRows(proxySchema);
const offline = optionRows(offlineSchema);
const server = optionRows(serverSchema);

/**
 * The tasks the configuration pages group options by, each with the options it holds: a key, or
 * `prefix.*` for every option under it, or `prefix*` for every key starting so.
 */
type Groups = readonly { readonly title: string; readonly options: readonly string[] }[];

const proxyGroups: Groups = [
  {
    title: 'Upstream and syncing',
    options: [
      'flagsUrl',
      'flagsApiToken',
      'flagsAppName',
      'flagsInstanceId',
      'refreshInterval',
      'upstreamStreaming',
      'upstreamTimeoutMs',
      'customHeaders',
      'upstreamAuthHeader',
      'environment',
      'projectName',
      'namePrefix',
      'tags',
      'httpOptions.*',
    ],
  },
  {
    title: 'Keys and tokens',
    options: [
      'clientKeys',
      'proxySecrets',
      'pretrustedTokens',
      'tokenRevalidationInterval',
      'strictTokens',
      'clientKeysHeaderName',
      'expServerSideSdkConfig.*',
      'publicSecrets',
    ],
  },
  {
    title: 'Listening, TLS and HTTP',
    options: [
      'port',
      'host',
      'tls.*',
      'proxyBasePath',
      'cors.*',
      'compression',
      'maxBodyBytes',
      'requestTimeoutMs',
      'maxConnectionsPerAddress',
      'trustProxy',
      'allowList',
      'denyList',
      'ignoreCallerRemoteAddress',
    ],
  },
  {
    title: 'Routes and evaluation',
    options: [
      'enable*',
      'disabledFeatureAnswer',
      'maxContextValueLength',
      'customStrategies',
      'expCustomEnrichers',
    ],
  },
  { title: 'Streaming and OFREP events', options: ['streaming*', 'deltaEventsRetained', 'ofrep*'] },
  {
    title: 'Usage metrics, monitoring and logs',
    options: [
      'metricsInterval',
      'metricsJitter',
      'usageMaxPendingBytes',
      'reportsPerMinute',
      'prometheus*',
      'logger',
      'useJsonLogger',
      'logLevel',
    ],
  },
  {
    title: 'Backups and bootstrap',
    options: ['storageProvider', 'backupDir', 'redis*', 's3*', 'expBootstrap.*'],
  },
  { title: 'Memory', options: ['answerCacheBytes', 'evaluationMemoBytes'] },
];

const serverGroups: Groups = [
  {
    title: 'Listening and HTTP',
    options: [
      'port',
      'host',
      'publicUrl',
      'bodyLimitBytes',
      'importBodyLimitBytes',
      'trustProxy',
      'requestTimeoutMs',
      'maxConnectionsPerAddress',
      'cors.*',
    ],
  },
  {
    title: 'Storage',
    options: [
      'databaseUrl',
      'dataDir',
      'databaseRetryMs',
      'databaseConnectTimeoutMs',
      'revisionCheckMs',
      'clientInstanceRetentionDays',
      'clientMetricsRetentionDays',
      'metricsBuffer*',
      'changeLogEventsPerEnvironment',
    ],
  },
  {
    title: 'Tokens, logins and limits',
    options: [
      'adminTokens',
      'clientTokens',
      'frontendTokens',
      'signupsPerMinute',
      'edgeValidatePerMinute',
      'session*',
      'login*',
    ],
  },
  { title: 'Single sign-on', options: ['oidc.*', 'breakGlassAdmin'] },
  {
    title: 'Frontend API',
    options: [
      'enableAllEndpoint',
      'frontendAnswerCacheBytes',
      'frontendReportsPerMinute',
      'ignoreCallerRemoteAddress',
    ],
  },
  { title: 'Streaming', options: ['streaming*'] },
  { title: 'Logs', options: ['logLevel', 'jsonLogger'] },
];

const belongs = (key: string, pattern: string) =>
  pattern.endsWith('.*')
    ? key.startsWith(pattern.slice(0, -1))
    : pattern.endsWith('*')
      ? key.startsWith(pattern.slice(0, -1))
      : key === pattern;

/**
 * One table per group, under the group's heading, the options in schema order. An option in no
 * group, or in two, stops the generator: each option is documented exactly once.
 */
function groupedTables(
  rows: readonly OptionRow[],
  groups: Groups,
  table: (rows: readonly OptionRow[]) => string,
) {
  for (const row of rows) {
    const homes = groups.filter((group) =>
      group.options.some((pattern) => belongs(row.key, pattern)),
    );
    if (homes.length !== 1)
      throw new Error(
        `option ${row.key} is in ${homes.length} groups of scripts/config-tables.ts (${homes.map((group) => group.title).join(', ') || 'none'}): give it exactly one`,
      );
  }
  return groups
    .map((group) => {
      const members = rows.filter((row) =>
        group.options.some((pattern) => belongs(row.key, pattern)),
      );
      if (members.length === 0)
        throw new Error(`group ${group.title} of scripts/config-tables.ts holds no option`);
      return `## ${group.title}\n\n${table(members)}`;
    })
    .join('\n\n');
}

// The Default cell of an option without one: each page keeps its own.
const proxyTable = () =>
  groupedTables(proxy, proxyGroups, (rows) => markdownTable(rows, '', EDGE_PROFILE_COLUMN));
const serverTable = () => groupedTables(server, serverGroups, (rows) => markdownTable(rows, '–'));

/** Each page's generated sections: marker name and content. */
const readmes: { path: string; sections: { name: string; content: () => string }[] }[] = [
  {
    path: 'docs/configuration/proxy.md',
    sections: [
      { name: 'options', content: proxyTable },
      { name: 'offline-options', content: () => markdownTable(offline, '') },
    ],
  },
  { path: 'docs/configuration/server.md', sections: [{ name: 'options', content: serverTable }] },
  {
    path: 'docs/migrate-from-unleash-edge.md',
    sections: [{ name: 'edge-options', content: () => edgeOptionsMarkdown(edgeVariableReaders) }],
  },
];

/** Every page with configuration tables (paths from the repository root), as it should read. */
export function readmesWithConfigTables(): { path: string; text: string }[] {
  const root = new URL('../', import.meta.url);
  return readmes.map(({ path, sections }) => ({
    path,
    text: sections.reduce(
      (text, section) => replaceSection(text, section.name, section.content()),
      readFileSync(new URL(path, root), 'utf8'),
    ),
  }));
}
