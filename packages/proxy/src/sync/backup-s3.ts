import type { S3Client } from '@aws-sdk/client-s3';
import type { ClientFeatures } from '@flags/schemas';
import type { S3Target } from '../config/backup.js';
import type { StorageProvider } from '../config/options.js';
import { EDGE_S3_OBJECTS, type EdgeBackupSource, type EdgeData } from './edge-backup.js';

/** Whether an S3 error means "no such object" (rather than a failure to report). */
function isMissing(error: unknown): boolean {
  const failure = error as { name?: string; $metadata?: { httpStatusCode?: number } } | null;
  return failure?.name === 'NoSuchKey' || failure?.$metadata?.httpStatusCode === 404;
}

/**
 * Backup storage in an S3 bucket (`s3BucketName`, `S3_BUCKET_NAME`): one JSON object per key,
 * `<key>.json`. Region, credentials and endpoint come from the standard AWS settings, as the AWS
 * SDK finds them (environment, shared config files, instance roles). Reads Unleash Edge's
 * objects in the same bucket too (`readEdge`).
 */
export class S3Backup implements StorageProvider, EdgeBackupSource {
  /** Created on first use: the AWS SDK is only loaded by proxies that use S3. */
  private client: Promise<S3Client> | undefined;

  constructor(private readonly target: S3Target) {}

  private async create(): Promise<S3Client> {
    const { S3Client } = await import('@aws-sdk/client-s3');
    return new S3Client({ forcePathStyle: this.target.forcePathStyle });
  }

  private connected(): Promise<S3Client> {
    this.client ??= this.create();
    return this.client;
  }

  /** The object's text, or `undefined` when there is no such object. */
  private async read(name: string): Promise<string | undefined> {
    const client = await this.connected();
    const { GetObjectCommand } = await import('@aws-sdk/client-s3');
    try {
      const answer = await client.send(
        new GetObjectCommand({ Bucket: this.target.bucket, Key: name }),
      );
      return await answer.Body?.transformToString('utf8');
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  }

  async get(key: string): Promise<ClientFeatures | undefined> {
    const text = await this.read(`${key}.json`);
    return text === undefined ? undefined : (JSON.parse(text) as ClientFeatures);
  }

  async set(key: string, value: ClientFeatures): Promise<void> {
    const client = await this.connected();
    const { PutObjectCommand } = await import('@aws-sdk/client-s3');
    await client.send(
      new PutObjectCommand({
        Bucket: this.target.bucket,
        Key: `${key}.json`,
        Body: JSON.stringify(value),
        ContentType: 'application/json',
      }),
    );
  }

  /** The first of Edge's names for the document that is there. */
  async readEdge(data: EdgeData): Promise<string | undefined> {
    for (const name of EDGE_S3_OBJECTS[data]) {
      const text = await this.read(name).catch((error: unknown) => {
        // A name the store cannot take (a leading `/` on some S3-compatible stores) is not fatal
        // while another name is left to try.
        if (name === EDGE_S3_OBJECTS[data].at(-1)) throw error;
        return undefined;
      });
      if (text !== undefined) return text;
    }
    return undefined;
  }

  /** Releases the HTTP connections (on app close). */
  async close(): Promise<void> {
    if (this.client === undefined) return;
    (await this.client).destroy();
  }
}
