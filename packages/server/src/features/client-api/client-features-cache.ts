import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { gzip as gzipCallback } from 'node:zlib';
import type { ClientFeature, ClientFeatures } from '@flags/schemas';
import { isDatabaseUnreachable } from '../../db/availability.js';
import type { Database } from '../../db/database.js';
import type { RevisionTracker } from '../../revision.js';
import { readLatestEventId } from './change-log-reads.js';
import { type FeatureQuery, readClientConfiguration } from './client-features-store.js';

export interface ServedConfiguration {
  /** The revision the body was built at. */
  readonly revision: number;
  /**
   * The change-log position the configuration reflects (every event up to this id, read before
   * it): a delta hydration served from this entry carries it as its event id.
   */
  readonly eventId: number;
  /** Strong ETag (quoted): a hash of the visible configuration, so it changes exactly when that does. */
  readonly etag: string;
  /** What `body` is serialized from; the frontend API compiles it (`FrontendStates`). */
  readonly payload: ClientFeatures;
  /** The serialized response body, built once per visible configuration. */
  readonly body: Buffer;
  /** The same body gzip-compressed once, for clients sending `Accept-Encoding: gzip`. */
  readonly gzipped: Buffer;
  /** The flags of the body by name (`GET /api/client/features/:name`). */
  readonly byName: ReadonlyMap<string, ClientFeature>;
}

const gzip = promisify(gzipCallback);

/** Bounds on cached query variants (filters come from clients, so the key space is open). */
const MAX_ENTRIES = 500;
const MAX_BYTES = 128 * 1024 * 1024;

const hash = (text: string, length: number) =>
  createHash('sha256').update(text).digest('base64url').slice(0, length);

/**
 * Pre-serialized client API bodies keyed by (token scope + filters). An entry is rebuilt when
 * the configuration revision moves; concurrent requests share one rebuild.
 */
export class ClientFeaturesCache {
  private readonly entries = new Map<string, ServedConfiguration>();
  private readonly building = new Map<string, Promise<ServedConfiguration>>();
  private bytes = 0;

  constructor(
    private readonly db: Database,
    private readonly revisions: RevisionTracker,
  ) {}

  get(query: FeatureQuery): ServedConfiguration | Promise<ServedConfiguration> {
    const key = cacheKey(query);
    const revisions = this.revisions.current();
    if (revisions instanceof Promise)
      return revisions.then((r) => this.lookup(key, query, r.config));
    return this.lookup(key, query, revisions.config);
  }

  private lookup(
    key: string,
    query: FeatureQuery,
    revision: number,
  ): ServedConfiguration | Promise<ServedConfiguration> {
    const entry = this.entries.get(key);
    if (entry && entry.revision === revision) return entry;
    // Keyed by revision too: a build started before a write must not answer requests after it.
    const flight = `${revision}\n${key}`;
    const inFlight = this.building.get(flight);
    if (inFlight) return inFlight;
    const build = this.build(key, query, revision)
      .catch((error: unknown) => {
        // Database unreachable: the last body built for this query, with its ETag (issue 18).
        if (entry && isDatabaseUnreachable(error)) return entry;
        throw error;
      })
      .finally(() => this.building.delete(flight));
    this.building.set(flight, build);
    return build;
  }

  /**
   * As `get`, but built at or after change-log event `eventId`: the
   * configuration a batch of events leads to. The revision is re-read while the entry is older
   * (a write commits its events and its revision together); after a few tries, or while the
   * database is unreachable, the entry there is.
   */
  async atLeast(query: FeatureQuery, eventId: number): Promise<ServedConfiguration> {
    let served = await this.get(query);
    for (let tries = 0; served.eventId < eventId && tries < 3; tries++) {
      this.revisions.invalidate();
      served = await this.get(query);
    }
    return served;
  }

  private async build(
    key: string,
    query: FeatureQuery,
    revision: number,
  ): Promise<ServedConfiguration> {
    // Read first: the configuration read after it reflects at least every event up to it.
    const eventId = await readLatestEventId(this.db);
    const configuration = await readClientConfiguration(this.db, query);
    const echo = queryEcho(query);
    const content = JSON.stringify([configuration.features, configuration.segments ?? null, echo]);
    const etag = `"${hash(content, 27)}"`;
    const queryHash = hash(key, 8);
    const payload: ClientFeatures = {
      version: 2,
      features: configuration.features,
      ...(configuration.segments ? { segments: configuration.segments } : {}),
      query: echo,
      meta: { revisionId: revision, etag, queryHash },
    };
    const body = Buffer.from(JSON.stringify(payload));
    // Compressed in the zlib thread pool, once per configuration instead of once per response.
    const gzipped = await gzip(body, { level: 6 });
    const byName = new Map(configuration.features.map((feature) => [feature.name, feature]));
    const served: ServedConfiguration = Object.freeze({
      revision,
      eventId,
      etag,
      payload,
      body,
      gzipped,
      byName,
    });
    this.store(key, served);
    return served;
  }

  /** Keeps the newest entries within both bounds (a Map iterates oldest insertion first). */
  private store(key: string, served: ServedConfiguration): void {
    this.remove(key);
    const size = served.body.length + served.gzipped.length;
    for (const oldest of this.entries.keys()) {
      if (this.entries.size < MAX_ENTRIES && this.bytes + size <= MAX_BYTES) break;
      this.remove(oldest);
    }
    this.entries.set(key, served);
    this.bytes += size;
  }

  private remove(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.bytes -= entry.body.length + entry.gzipped.length;
  }
}

function cacheKey(query: FeatureQuery): string {
  return JSON.stringify([
    query.environment,
    query.projects ?? null,
    query.namePrefix ?? null,
    query.tags ?? null,
    query.inlineSegmentConstraints,
  ]);
}

function queryEcho(query: FeatureQuery): Record<string, unknown> {
  const echo: Record<string, unknown> = {};
  if (query.tags) echo.tag = query.tags.map(([type, value]) => [type, value]);
  if (query.projects) echo.project = query.projects;
  if (query.namePrefix !== undefined) echo.namePrefix = query.namePrefix;
  echo.environment = query.environment;
  echo.inlineSegmentConstraints = query.inlineSegmentConstraints;
  return echo;
}
