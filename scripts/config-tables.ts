// The configuration tables of the READMEs, generated from the services' option schemas.
// `npm run docs:config` writes them; test/readme.test.ts fails when a README differs.
import { readFileSync } from 'node:fs';
import {
  markdownTable,
  type OptionRow,
  optionRows,
  type ProfileColumn,
  replaceSection,
} from '@flags/config';
import { EDGE_PROFILE_COLUMN, offlineSchema, proxySchema } from '@flags/proxy';
import { serverSchema } from '@flags/server';

const proxy = optionRows(proxySchema);
const offline = optionRows(offlineSchema);
const server = optionRows(serverSchema);

/**
 * Each README's tables: marker name, rows, the Default cell of an option without one, and the
 * profile whose defaults get a column of their own.
 */
const readmes: {
  path: string;
  tables: { section: string; rows: OptionRow[]; noDefault: string; profile?: ProfileColumn }[];
}[] = [
  {
    path: 'packages/proxy/README.md',
    tables: [
      { section: 'options', rows: proxy, noDefault: '', profile: EDGE_PROFILE_COLUMN },
      { section: 'offline-options', rows: offline, noDefault: '' },
    ],
  },
  {
    path: 'packages/server/README.md',
    tables: [{ section: 'options', rows: server, noDefault: '–' }],
  },
  {
    path: 'README.md',
    tables: [
      { section: 'proxy-options', rows: proxy, noDefault: '', profile: EDGE_PROFILE_COLUMN },
      { section: 'server-options', rows: server, noDefault: '–' },
    ],
  },
];

/** Every README with configuration tables (paths from the repository root), as it should read. */
export function readmesWithConfigTables(): { path: string; text: string }[] {
  const root = new URL('../', import.meta.url);
  return readmes.map(({ path, tables }) => ({
    path,
    text: tables.reduce(
      (text, table) =>
        replaceSection(
          text,
          table.section,
          markdownTable(table.rows, table.noDefault, table.profile),
        ),
      readFileSync(new URL(path, root), 'utf8'),
    ),
  }));
}
