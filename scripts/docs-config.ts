// `npm run docs:config`: rewrites the configuration tables of docs/ from the option schemas.
import { writeFileSync } from 'node:fs';
import { readmesWithConfigTables } from './config-tables.js';

const root = new URL('../', import.meta.url);
for (const readme of readmesWithConfigTables()) {
  writeFileSync(new URL(readme.path, root), readme.text);
  console.log(`wrote ${readme.path}`);
}
