// The configuration tables of the user docs, generated from the services' option schemas.
// `npm run docs:config` writes them; test/readme.test.ts fails when a page differs.
import { readFileSync } from 'node:fs';
import { markdownTable, optionRows, replaceSection } from '@flags/config';
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

// The Default cell of an option without one: each page keeps its own.
const proxyTable = () => markdownTable(proxy, '', EDGE_PROFILE_COLUMN);
const serverTable = () => markdownTable(server, '–');

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
