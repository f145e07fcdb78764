import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ClientFeatures } from '@flags/schemas';
import type { StorageProvider } from '../config/options.js';
import { EDGE_FILES, type EdgeBackupSource, type EdgeData } from './edge-backup.js';

/** A key as a file name: anything but letters, digits, `.`, `_` and `-` becomes `_`. */
function fileName(key: string): string {
  return `${key.replace(/[^A-Za-z0-9._-]/g, '_')}.json`;
}

/** The file's text, or `undefined` when there is no such file. */
async function textOf(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * Backup storage in a directory (`backupDir`, `BACKUP_DIR`): one JSON file per key, written to a
 * temporary file and renamed over the old one, so a crash mid-write never leaves half a payload.
 * Reads Unleash Edge's files in the same directory too (`readEdge`).
 */
export class FileBackup implements StorageProvider, EdgeBackupSource {
  constructor(private readonly dir: string) {}

  async get(key: string): Promise<ClientFeatures | undefined> {
    const text = await textOf(join(this.dir, fileName(key)));
    return text === undefined ? undefined : (JSON.parse(text) as ClientFeatures);
  }

  readEdge(data: EdgeData): Promise<string | undefined> {
    return textOf(join(this.dir, EDGE_FILES[data]));
  }

  async set(key: string, value: ClientFeatures): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const target = join(this.dir, fileName(key));
    // A name no other write uses, in this process or another one sharing the directory.
    const temporary = `${target}.${process.pid}.${randomUUID()}.tmp`;
    try {
      await writeFile(temporary, JSON.stringify(value));
      await rename(temporary, target);
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
  }
}
