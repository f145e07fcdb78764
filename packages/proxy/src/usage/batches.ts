import {
  type BulkApplication,
  type BulkMetric,
  type ImpactMetric,
  MAX_BULK_APPLICATIONS,
  MAX_BULK_METRICS,
  MAX_REPORT_FLAGS,
} from '@flags/schemas';
import type { AppBucket, ToggleCount } from './aggregator.js';
import { ImpactMetrics } from './impact.js';

/**
 * Largest body sent, bytes: Unleash Edge cuts its bulk bodies at 95 KiB, under unleash-server's
 * 100 KiB body limit.
 */
export const MAX_BATCH_BYTES = 95 * 1024;

/** How the proxy names itself in the bodies it sends. */
export interface Sender {
  readonly appName: string;
  readonly instanceId: string;
  readonly sdkVersion: string;
  /** When the proxy started, ISO 8601. */
  readonly started: string;
  /** The send interval, ms. */
  readonly interval: number;
}

/** One body to send, and the counts it carries (merged back into the aggregator if it fails). */
export interface Batch {
  readonly body: string;
  readonly buckets: readonly AppBucket[];
}

/** One entry of a body, its size, and the bucket it comes from. */
type Piece = { readonly bucket: AppBucket; readonly bytes: number } & (
  | { readonly kind: 'application'; readonly wire: unknown }
  | {
      readonly kind: 'registration';
      readonly wire: unknown;
      /** The instance the registration is kept under (`AppBucket.registrations`). */
      readonly instanceId: string;
      readonly registration: BulkApplication;
    }
  | {
      readonly kind: 'toggle';
      readonly wire: unknown;
      readonly name: string;
      readonly toggle: ToggleCount;
    }
  | { readonly kind: 'impact'; readonly wire: ImpactMetric }
);

/** A bulk body's bytes besides its pieces: `{"applications":[],"metrics":[],"impactMetrics":[]}`. */
const BULK_ENVELOPE_BYTES = 64;
/** What `"impactMetrics":[]` and its comma add to a per-application body. */
const IMPACT_FIELD_BYTES = 20;

function piece<T extends Omit<Piece, 'bytes'>>(fields: T): T & { bytes: number } {
  // The comma that separates it from the next piece counts too.
  return { ...fields, bytes: Buffer.byteLength(JSON.stringify(fields.wire)) + 1 };
}

/** The most entries of each list one body may carry: what the upstream's schema takes. */
export interface EntryLimits {
  /** `metrics` entries (bulk) or `toggles` (per application). */
  readonly toggles: number;
  /** `applications` entries (bulk): the proxy's own and downstream registrations. */
  readonly applications: number;
  /** `impactMetrics` entries. */
  readonly impact: number;
}

/** Impact metrics one body carries at most (`impactMetricsSchema.maxItems`). */
const MAX_BODY_IMPACT_METRICS = 1000;

const BULK_LIMITS: EntryLimits = {
  toggles: MAX_BULK_METRICS,
  applications: MAX_BULK_APPLICATIONS,
  impact: MAX_BODY_IMPACT_METRICS,
};
const APP_LIMITS: EntryLimits = {
  toggles: MAX_REPORT_FLAGS,
  applications: 1,
  impact: MAX_BODY_IMPACT_METRICS,
};

/** Which list of a body a piece goes into. */
function listOf(one: Piece): keyof EntryLimits {
  return one.kind === 'toggle' ? 'toggles' : one.kind === 'impact' ? 'impact' : 'applications';
}

/**
 * Cuts `pieces` into groups that fit one body each (`envelope`: the body's bytes besides them;
 * `limits`: the entries of each list the upstream takes), in order; a piece too large alone goes
 * alone.
 */
function pack(
  pieces: readonly Piece[],
  envelope: number,
  maxBytes: number,
  limits: EntryLimits,
): Piece[][] {
  const groups: Piece[][] = [];
  let group: Piece[] = [];
  let bytes = envelope;
  const counts = { toggles: 0, applications: 0, impact: 0 };
  for (const one of pieces) {
    const list = listOf(one);
    if (group.length > 0 && (bytes + one.bytes >= maxBytes || counts[list] >= limits[list])) {
      groups.push(group);
      group = [];
      bytes = envelope;
      counts.toggles = 0;
      counts.applications = 0;
      counts.impact = 0;
    }
    group.push(one);
    bytes += one.bytes;
    counts[list]++;
  }
  if (group.length > 0) groups.push(group);
  return groups;
}

/** The buckets a group of pieces carries: the part of each source bucket it holds. */
function bucketsOf(pieces: readonly Piece[]): AppBucket[] {
  const parts = new Map<AppBucket, AppBucket>();
  for (const one of pieces) {
    const source = one.bucket;
    let part = parts.get(source);
    if (part === undefined) {
      part = {
        appName: source.appName,
        environment: source.environment,
        start: source.start,
        toggles: new Map(),
        announced: false,
        // Holds only what the source held, so no bound is reached.
        impact: new ImpactMetrics(Number.POSITIVE_INFINITY, () => {}),
        registrations: new Map(),
        // Charged to the budget through its source bucket, not again.
        bytes: 0,
      };
      parts.set(source, part);
    }
    switch (one.kind) {
      case 'application':
        part.announced = source.announced;
        break;
      case 'registration':
        part.registrations.set(one.instanceId, one.registration);
        break;
      case 'toggle':
        part.toggles.set(one.name, one.toggle);
        break;
      case 'impact':
        part.impact.add(one.wire);
        break;
    }
  }
  return [...parts.values()];
}

function toggleCounts(toggle: ToggleCount) {
  return { yes: toggle.yes, no: toggle.no, variants: Object.fromEntries(toggle.variants) };
}

function stopOf(bucket: AppBucket, stop: number): string {
  return new Date(Math.max(stop, bucket.start)).toISOString();
}

/**
 * The application entry of a bucket in Edge's bulk form: the proxy's instance, which aggregated
 * its counts (another application's bucket names the proxy in `connectVia`); `undefined` for a
 * bucket that only passes on downstream registrations, which has no instance of the proxy's in it.
 */
export function ownApplication(
  bucket: AppBucket,
  environment: string,
  sender: Sender,
): BulkApplication | undefined {
  const aggregated =
    bucket.toggles.size > 0 ||
    bucket.announced ||
    bucket.impact.size > 0 ||
    bucket.registrations.size === 0;
  if (!aggregated) return undefined;
  return {
    appName: bucket.appName,
    instanceId: sender.instanceId,
    environment,
    sdkVersion: sender.sdkVersion,
    started: sender.started,
    interval: sender.interval,
    strategies: [],
    ...(bucket.appName === sender.appName ? {} : { connectVia: [viaOf(sender)] }),
  };
}

/** A downstream registration as sent on: stamped with `environment`, the proxy added to `connectVia`. */
export function relayedRegistration(
  registration: BulkApplication,
  environment: string,
  sender: Sender,
): BulkApplication {
  return {
    ...registration,
    environment,
    connectVia: [...(registration.connectVia ?? []), viaOf(sender)],
  };
}

/** One flag's counts of a bucket in Edge's bulk form (`ClientMetricsEnv`). */
export function bulkMetric(
  bucket: AppBucket,
  name: string,
  toggle: ToggleCount,
  environment: string,
  stop: number,
): BulkMetric {
  return {
    featureName: name,
    appName: bucket.appName,
    environment,
    timestamp: stopOf(bucket, stop),
    ...toggleCounts(toggle),
  };
}

function viaOf(sender: Sender) {
  return { appName: sender.appName, instanceId: sender.instanceId };
}

/**
 * Edge's bulk bodies (`POST {flagsUrl}/client/metrics/bulk`) for one environment's buckets, each
 * under `maxBytes`: every application as an entry of `applications` (the proxy's instance, which
 * aggregated it; downstream registrations as they came, with the proxy added to `connectVia`), its
 * counts as `metrics` entries stamped with `environment`, its impact metrics as `impactMetrics`.
 */
export function bulkBatches(
  buckets: readonly AppBucket[],
  environment: string,
  sender: Sender,
  stop: number,
  maxBytes = MAX_BATCH_BYTES,
  limits = BULK_LIMITS,
): Batch[] {
  const pieces: Piece[] = [];
  for (const bucket of buckets) {
    const application = ownApplication(bucket, environment, sender);
    if (application !== undefined)
      pieces.push(piece({ bucket, kind: 'application', wire: application }));
    for (const [instanceId, registration] of bucket.registrations) {
      const wire = relayedRegistration(registration, environment, sender);
      pieces.push(piece({ bucket, kind: 'registration', wire, instanceId, registration }));
    }
    for (const [name, toggle] of bucket.toggles) {
      const wire = bulkMetric(bucket, name, toggle, environment, stop);
      pieces.push(piece({ bucket, kind: 'toggle', wire, name, toggle }));
    }
    for (const metric of bucket.impact.toWire())
      pieces.push(piece({ bucket, kind: 'impact', wire: metric }));
  }
  return pack(pieces, BULK_ENVELOPE_BYTES, maxBytes, limits).map((group) => {
    const impactMetrics = group.flatMap((one) => (one.kind === 'impact' ? [one.wire] : []));
    const body = {
      applications: group.flatMap((one) =>
        one.kind === 'application' || one.kind === 'registration' ? [one.wire] : [],
      ),
      metrics: group.flatMap((one) => (one.kind === 'toggle' ? [one.wire] : [])),
      ...(impactMetrics.length > 0 ? { impactMetrics } : {}),
    };
    return { body: JSON.stringify(body), buckets: bucketsOf(group) };
  });
}

/**
 * Unleash client metrics bodies (`POST {flagsUrl}/client/metrics`), one application each, under
 * the proxy's instance; an application whose counts do not fit one body under `maxBytes` gets
 * several. Downstream registrations have no place in this form: their applications are reported,
 * their instances are not.
 */
export function appBatches(
  buckets: readonly AppBucket[],
  sender: Sender,
  platform: { readonly name: string; readonly version: string },
  stop: number,
  maxBytes = MAX_BATCH_BYTES,
  limits = APP_LIMITS,
): Batch[] {
  const batches: Batch[] = [];
  for (const bucket of buckets) {
    const body = (toggles: Record<string, unknown>, impactMetrics: ImpactMetric[]) => ({
      appName: bucket.appName,
      instanceId: sender.instanceId,
      ...(bucket.environment === undefined ? {} : { environment: bucket.environment }),
      sdkVersion: sender.sdkVersion,
      platformName: platform.name,
      platformVersion: platform.version,
      yggdrasilVersion: null,
      specVersion: '5.2.0',
      bucket: {
        start: new Date(bucket.start).toISOString(),
        stop: stopOf(bucket, stop),
        toggles,
      },
      ...(impactMetrics.length > 0 ? { impactMetrics } : {}),
    });
    // The first body of an application stands for it (`announced`), counts or not.
    const pieces: Piece[] = [piece({ bucket, kind: 'application', wire: null })];
    for (const [name, toggle] of bucket.toggles)
      pieces.push(
        piece({ bucket, kind: 'toggle', wire: [name, toggleCounts(toggle)], name, toggle }),
      );
    for (const metric of bucket.impact.toWire())
      pieces.push(piece({ bucket, kind: 'impact', wire: metric }));
    const envelope = Buffer.byteLength(JSON.stringify(body({}, []))) + IMPACT_FIELD_BYTES;
    for (const group of pack(pieces, envelope, maxBytes, limits)) {
      const toggles = group.flatMap((one) =>
        one.kind === 'toggle' ? [one.wire as [string, unknown]] : [],
      );
      const impactMetrics = group.flatMap((one) => (one.kind === 'impact' ? [one.wire] : []));
      batches.push({
        body: JSON.stringify(body(Object.fromEntries(toggles), impactMetrics)),
        buckets: bucketsOf(group),
      });
    }
  }
  return batches;
}
