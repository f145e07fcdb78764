import type { Evaluation, Snapshot } from '@flags/engine';
import {
  type BulkApplication,
  type BulkMetrics,
  MAX_METRIC_COUNT,
  MAX_REPORT_VARIANTS,
  type UsageReport,
} from '@flags/schemas';
import type { EvaluationCounter } from '@flags/serving';
import { ImpactMetrics } from './impact.js';
import { type DroppedKind, ENTRY_BYTES, PendingBudget, stringBytes } from './pending-budget.js';

/** The memory pending usage takes by default, bytes (`usageMaxPendingBytes`). */
export const DEFAULT_MAX_PENDING_BYTES = 16 * 1024 * 1024;
/** Estimated bytes of a bucket beside its name and entries. */
const BUCKET_BYTES = 8 * ENTRY_BYTES;

/** Counts of one flag in one bucket. */
export interface ToggleCount {
  yes: number;
  no: number;
  readonly variants: Map<string, number>;
}

/** One application's counts since `start` (epoch ms), sent upstream as one metrics body. */
export interface AppBucket {
  readonly appName: string;
  readonly environment: string | undefined;
  start: number;
  readonly toggles: Map<string, ToggleCount>;
  /** A frontend SDK of the application registered: the bucket is sent even without counts. */
  announced: boolean;
  /** Impact metrics its SDKs reported (the proxy's own bucket: those of downstream bulk bodies). */
  readonly impact: ImpactMetrics;
  /** Registrations of its instances that downstream Edges and proxies sent in bulk, by instance. */
  readonly registrations: Map<string, BulkApplication>;
  /** Estimated bytes charged to the pending budget for it (see `PendingBudget`). */
  bytes: number;
}

export interface AggregatorOptions {
  /** The proxy's own app name: evaluations are counted under it. */
  readonly appName: string;
  /** The configured `environment`; it overrides what reports say, like in evaluation contexts. */
  readonly environment: string | undefined;
  /** Distinct flag names one bucket keeps beyond the flags of the current snapshot. */
  readonly maxExtraNames?: number;
  /** Distinct (appName, environment) buckets kept for frontend reports. */
  readonly maxApps?: number;
  /** Impact-metric series one bucket keeps. */
  readonly maxImpactSeries?: number;
  /** Downstream registrations one bucket keeps. */
  readonly maxRegistrations?: number;
  /**
   * The memory bound of pending usage, shared by every environment's aggregator (a bound of
   * `DEFAULT_MAX_PENDING_BYTES` of its own unless given).
   */
  readonly budget?: PendingBudget;
  readonly now?: () => number;
}

/**
 * Evaluation counts of one snapshot: yes/no per flag position in typed arrays and one counter per
 * interned variant result, so counting an evaluation is an increment and allocates nothing.
 */
class Tally implements EvaluationCounter {
  readonly yes: Float64Array;
  readonly no: Float64Array;
  readonly index: ReadonlyMap<string, number>;
  /** Hits of results that carry a real variant (interned by the engine, so usable as keys). */
  readonly variants = new Map<Evaluation, number>();
  /**
   * Answers sent again from the answer cache and how often: folded into the counts when they are
   * collected, so a cache hit costs one map update instead of a count per flag.
   */
  readonly repeated = new Map<readonly Evaluation[], number>();
  dirty = false;
  released = false;

  constructor(
    readonly names: readonly string[],
    /** Where names the snapshot does not know are counted. */
    private readonly countUnknown: (name: string) => void,
  ) {
    this.yes = new Float64Array(names.length);
    this.no = new Float64Array(names.length);
    this.index = new Map(names.map((name, i) => [name, i]));
  }

  count(i: number, result: Evaluation): void {
    this.add(i, result, 1);
  }

  countNamed(name: string, result: Evaluation | undefined): void {
    if (result === undefined) {
      this.countUnknown(name);
      return;
    }
    this.dirty = true;
    this.add(this.index.get(name) as number, result, 1);
  }

  countAgain(results: readonly Evaluation[]): void {
    this.dirty = true;
    this.repeated.set(results, (this.repeated.get(results) ?? 0) + 1);
  }

  release(): void {
    this.released = true;
  }

  /** Adds the repeated answers to the counts. */
  settle(): void {
    for (const [results, times] of this.repeated) {
      for (let i = 0; i < results.length; i++) this.add(i, results[i] as Evaluation, times);
    }
    this.repeated.clear();
  }

  private add(i: number, result: Evaluation, times: number): void {
    if (!result.enabled) {
      this.no[i] = (this.no[i] as number) + times;
      return;
    }
    this.yes[i] = (this.yes[i] as number) + times;
    if (result.variant.enabled) this.variants.set(result, (this.variants.get(result) ?? 0) + times);
  }
}

function newToggle(): ToggleCount {
  return { yes: 0, no: 0, variants: new Map() };
}

/** Estimated bytes of a kept registration. */
function registrationBytes(registration: BulkApplication): number {
  return ENTRY_BYTES + 2 * JSON.stringify(registration).length;
}

/** Whether a bucket has anything to send. */
function hasContent(bucket: AppBucket): boolean {
  return (
    bucket.toggles.size > 0 ||
    bucket.announced ||
    bucket.impact.size > 0 ||
    bucket.registrations.size > 0
  );
}

/**
 * Usage metrics of one environment: what the proxy evaluated (per snapshot, see `Tally`) and what
 * SDKs and downstream relays reported, grouped per application. `take()` hands the counts to the
 * reporter and starts new buckets; `restore()` merges counts back after a failed send, so nothing
 * is lost or sent twice. Memory is bounded: a bucket keeps the current flags plus `maxExtraNames`
 * other names, `maxImpactSeries` impact-metric series and `maxRegistrations` downstream
 * registrations, and at most `maxApps` reporting applications have buckets of their own (further
 * ones are counted under the proxy's own name); a flag keeps at most `MAX_REPORT_VARIANTS` variant
 * names; and everything kept, in every environment, stays within the bytes of the shared
 * `PendingBudget` (new entries beyond it are dropped and counted).
 */
export class UsageAggregator {
  private readonly tallies = new Set<Tally>();
  /** The tally of the environment's whole snapshot: its flags are the known names. */
  private current: Tally | undefined;
  private readonly buckets = new Map<string, AppBucket>();
  private readonly maxExtraNames: number;
  private readonly maxApps: number;
  private readonly maxImpactSeries: number;
  private readonly maxRegistrations: number;
  private readonly now: () => number;
  readonly budget: PendingBudget;
  /** Entries dropped because a bucket, a flag or the budget was full (logged by the reporter). */
  dropped = 0;
  private readonly countDropped = (samples: number) => {
    this.dropped += samples;
  };

  constructor(private readonly options: AggregatorOptions) {
    this.maxExtraNames = options.maxExtraNames ?? 1000;
    this.maxApps = options.maxApps ?? 100;
    this.maxImpactSeries = options.maxImpactSeries ?? 1000;
    this.maxRegistrations = options.maxRegistrations ?? 100;
    this.budget = options.budget ?? new PendingBudget(DEFAULT_MAX_PENDING_BYTES);
    this.now = options.now ?? Date.now;
  }

  /**
   * Starts counting a new snapshot's evaluations: returns the counter that its `CompiledState`
   * counts into while it evaluates, until the state releases it. Called once per snapshot, before
   * any request can see it. `scoped`: the snapshot holds only some projects' flags (a token's), so
   * its names do not replace the known ones. The snapshot is only read (its flag names), never
   * changed: the engine's objects stay the engine's.
   */
  track(snapshot: Snapshot, scoped = false): EvaluationCounter {
    const tally = new Tally(snapshot.names, (name) => this.countUnknown(name));
    this.tallies.add(tally);
    if (!scoped) this.current = tally;
    return tally;
  }

  /** A name the snapshot does not know was asked for (`POST /proxy` with `toggles`). */
  countUnknown(name: string): void {
    const toggle = this.toggle(this.bucket(this.options.appName, this.options.environment), name);
    if (toggle !== undefined) toggle.no++;
  }

  /**
   * A registration made with a client key (public, so anyone's): its application is reported with
   * the next send, under the proxy's own instance, like the counts of frontend reports, and never
   * as an SDK instance of its own. Further applications beyond `maxApps` are dropped.
   */
  announce(appName: string, environment: string | undefined): void {
    const bucket = this.bucket(appName, this.options.environment ?? environment);
    if (bucket.appName === appName) bucket.announced = true;
  }

  /** Adds an SDK's report to its application's bucket (counts added, never replayed). */
  addReport(report: UsageReport): void {
    const bucket = this.bucket(report.appName, this.options.environment ?? report.environment);
    for (const name of Object.keys(report.bucket.toggles)) {
      const counts = report.bucket.toggles[name];
      if (counts !== undefined)
        this.addCounts(bucket, name, counts.yes, counts.no, counts.variants);
    }
    for (const metric of report.impactMetrics ?? []) bucket.impact.add(metric);
  }

  /**
   * Adds a downstream Edge's or proxy's bulk body: its metrics to their applications' buckets, its
   * registrations beside them, its impact metrics (which name no application) to the proxy's own
   * bucket. With a fixed environment (the token's), entries of other environments are skipped, as
   * the upstream would skip them.
   */
  addBulk(body: BulkMetrics): void {
    const fixed = this.options.environment;
    for (const application of body.applications) {
      const environment = application.environment ?? undefined;
      const instanceId = application.instanceId;
      // Edge fills most fields of a registration or leaves them null: one without an instance is no registration.
      if ((fixed !== undefined && environment !== fixed) || typeof instanceId !== 'string')
        continue;
      const bucket = this.bucket(application.appName, fixed ?? environment);
      if (bucket.appName !== application.appName) continue;
      this.keepRegistration(bucket, instanceId, application);
    }
    for (const metric of body.metrics) {
      if (fixed !== undefined && metric.environment !== fixed) continue;
      const bucket = this.bucket(metric.appName, fixed ?? metric.environment);
      this.addCounts(bucket, metric.featureName, metric.yes ?? 0, metric.no ?? 0, metric.variants);
    }
    const impactMetrics = body.impactMetrics ?? [];
    if (impactMetrics.length === 0) return;
    const own = this.bucket(this.options.appName, fixed);
    for (const metric of impactMetrics) own.impact.add(metric);
  }

  /**
   * Moves every count into the returned buckets and starts empty ones. Counts above what one
   * report may carry (`MAX_METRIC_COUNT`) stay behind for the next report. The taken buckets stay
   * charged to the budget until they are `release`d (their send is over).
   */
  take(): AppBucket[] {
    this.collectTallies();
    const taken = [...this.buckets.values()].filter(hasContent);
    this.buckets.clear();
    for (const bucket of taken) {
      for (const [name, toggle] of bucket.toggles) {
        const over = overflow(toggle);
        if (over === undefined) continue;
        const rest = this.bucket(bucket.appName, bucket.environment);
        rest.start = Math.min(rest.start, bucket.start);
        const target = this.toggle(rest, name, true) as ToggleCount;
        for (const variant of over.variants.keys())
          if (!target.variants.has(variant)) this.charge(rest, ENTRY_BYTES + stringBytes(variant));
        mergeToggle(target, over);
      }
    }
    return taken;
  }

  /**
   * The buckets the next `take` would hand over, left in place (`/internal-backstage/metricsbatch`):
   * read them at once, before anything else counts.
   */
  pending(): readonly AppBucket[] {
    this.collectTallies();
    return [...this.buckets.values()].filter(hasContent);
  }

  /** The send of buckets `take` returned is over: their memory no longer counts. */
  release(buckets: readonly AppBucket[]): void {
    let bytes = 0;
    for (const bucket of buckets) bytes += bucket.bytes;
    this.budget.release(bytes);
  }

  /**
   * Merges buckets whose send failed back into the current ones (earliest start kept), within
   * the budget: what no longer fits is dropped and counted. Call `release` for them first.
   */
  restore(buckets: readonly AppBucket[]): void {
    for (const old of buckets) {
      const bucket = this.bucket(old.appName, old.environment);
      bucket.start = Math.min(bucket.start, old.start);
      if (old.announced && bucket.appName === old.appName) bucket.announced = true;
      for (const [name, toggle] of old.toggles) {
        const target = this.toggle(bucket, name, true, true);
        if (target === undefined) continue;
        target.yes += toggle.yes;
        target.no += toggle.no;
        for (const [variant, count] of toggle.variants)
          this.addVariant(bucket, target, variant, count);
      }
      for (const metric of old.impact.toWire()) bucket.impact.add(metric, true);
      if (bucket.appName !== old.appName) continue;
      for (const [instance, registration] of old.registrations) {
        if (!bucket.registrations.has(instance))
          this.keepRegistration(bucket, instance, registration);
      }
    }
  }

  /** Whether anything is counted (tallies included). */
  get empty(): boolean {
    for (const tally of this.tallies) if (tally.dirty) return false;
    for (const bucket of this.buckets.values()) if (hasContent(bucket)) return false;
    return true;
  }

  private collectTallies(): void {
    const own = () => this.bucket(this.options.appName, this.options.environment);
    for (const tally of this.tallies) {
      if (!tally.dirty) {
        // A released snapshot is dropped once a collection finds it idle: requests that were
        // still using it when it was swapped out have finished counting by then. Snapshots still
        // served (the environment's and each token scope's) stay, however long they are idle.
        if (tally.released) this.tallies.delete(tally);
        continue;
      }
      tally.dirty = false;
      tally.settle();
      const bucket = own();
      const names = tally.names;
      for (let i = 0; i < names.length; i++) {
        const yes = tally.yes[i] as number;
        const no = tally.no[i] as number;
        if (yes === 0 && no === 0) continue;
        tally.yes[i] = 0;
        tally.no[i] = 0;
        const toggle = this.toggle(bucket, names[i] as string, true) as ToggleCount;
        toggle.yes += yes;
        toggle.no += no;
      }
      for (const [result, hits] of tally.variants) {
        const toggle = this.toggle(bucket, result.name, true) as ToggleCount;
        const name = result.variant.name;
        const kept = toggle.variants.get(name);
        // The flags' own variants: bounded by the configuration, always kept.
        if (kept === undefined) this.charge(bucket, ENTRY_BYTES + stringBytes(name));
        toggle.variants.set(name, (kept ?? 0) + hits);
      }
      tally.variants.clear();
    }
  }

  private bucket(appName: string, environment: string | undefined): AppBucket {
    const key = `${appName}\u0000${environment ?? ''}`;
    const bucket = this.buckets.get(key);
    if (bucket !== undefined) return bucket;
    if (this.buckets.size >= this.maxApps && appName !== this.options.appName) {
      return this.bucket(this.options.appName, this.options.environment);
    }
    const created: AppBucket = {
      appName,
      environment,
      start: this.now(),
      toggles: new Map(),
      announced: false,
      impact: new ImpactMetrics(this.maxImpactSeries, this.countDropped, (bytes) =>
        this.reserve(created, bytes, 'impact'),
      ),
      registrations: new Map(),
      bytes: 0,
    };
    const bytes = BUCKET_BYTES + stringBytes(appName) + stringBytes(environment ?? '');
    // The proxy's own bucket is always kept; another application's counts go there when the
    // budget has no room for a bucket of its own.
    if (appName === this.options.appName) this.charge(created, bytes);
    else if (!this.budget.reserve(bytes, 'flag'))
      return this.bucket(this.options.appName, this.options.environment);
    else created.bytes += bytes;
    this.buckets.set(key, created);
    return created;
  }

  /** Charges `bytes` of `bucket` whatever the bound. */
  private charge(bucket: AppBucket, bytes: number): void {
    this.budget.charge(bytes);
    bucket.bytes += bytes;
  }

  /** Charges `bytes` of a new entry of `bucket` if they fit the budget (else it is dropped). */
  private reserve(bucket: AppBucket, bytes: number, kind: DroppedKind): boolean {
    if (!this.budget.reserve(bytes, kind)) {
      this.dropped++;
      return false;
    }
    bucket.bytes += bytes;
    return true;
  }

  /** Adds `count` hits of `variant`; a new name only within the flag's and the budget's bounds. */
  private addVariant(bucket: AppBucket, toggle: ToggleCount, variant: string, count: number): void {
    const kept = toggle.variants.get(variant);
    if (kept !== undefined) {
      toggle.variants.set(variant, kept + count);
      return;
    }
    if (toggle.variants.size >= MAX_REPORT_VARIANTS) {
      this.budget.drop('variant');
      this.dropped++;
      return;
    }
    if (this.reserve(bucket, ENTRY_BYTES + stringBytes(variant), 'variant'))
      toggle.variants.set(variant, count);
  }

  /** Keeps a downstream registration within `maxRegistrations` and the budget. */
  private keepRegistration(bucket: AppBucket, instanceId: string, registration: BulkApplication) {
    const registrations = bucket.registrations;
    const old = registrations.get(instanceId);
    if (old === undefined && registrations.size >= this.maxRegistrations) return;
    const bytes =
      registrationBytes(registration) - (old === undefined ? 0 : registrationBytes(old));
    if (bytes > 0 && !this.reserve(bucket, bytes, 'registration')) return;
    if (bytes < 0) {
      this.budget.release(-bytes);
      bucket.bytes += bytes;
    }
    registrations.set(instanceId, registration);
  }

  /** Adds reported counts of `name` (dropped when the bucket is full of unknown names). */
  private addCounts(
    bucket: AppBucket,
    name: string,
    yes: number,
    no: number,
    variants: Readonly<Record<string, number>> | null | undefined,
  ): void {
    const toggle = this.toggle(bucket, name);
    if (toggle === undefined) return;
    toggle.yes += yes;
    toggle.no += no;
    if (variants === null || variants === undefined) return;
    for (const variant of Object.keys(variants)) {
      const count = variants[variant] ?? 0;
      if (count > 0) this.addVariant(bucket, toggle, variant, count);
    }
  }

  /**
   * The counts of `name` in `bucket`, or `undefined` when the bucket is full or the budget is
   * (`force`: whatever the bucket holds; `bounded`: a forced one within the budget still).
   */
  private toggle(
    bucket: AppBucket,
    name: string,
    force = false,
    bounded = !force,
  ): ToggleCount | undefined {
    let toggle = bucket.toggles.get(name);
    if (toggle !== undefined) return toggle;
    const known = this.current?.index.size ?? 0;
    if (
      !force &&
      bucket.toggles.size >= known + this.maxExtraNames &&
      !(this.current?.index.has(name) ?? false)
    ) {
      this.budget.drop('flag');
      this.dropped++;
      return undefined;
    }
    const bytes = ENTRY_BYTES + stringBytes(name);
    if (!bounded) this.charge(bucket, bytes);
    else if (!this.reserve(bucket, bytes, 'flag')) return undefined;
    toggle = newToggle();
    bucket.toggles.set(name, toggle);
    return toggle;
  }
}

function mergeToggle(target: ToggleCount, source: ToggleCount): void {
  target.yes += source.yes;
  target.no += source.no;
  for (const [variant, count] of source.variants) {
    target.variants.set(variant, (target.variants.get(variant) ?? 0) + count);
  }
}

/** Cuts `toggle` down to what one report may carry; returns the rest, if any. */
function overflow(toggle: ToggleCount): ToggleCount | undefined {
  let rest: ToggleCount | undefined;
  if (toggle.yes > MAX_METRIC_COUNT) {
    rest ??= newToggle();
    rest.yes = toggle.yes - MAX_METRIC_COUNT;
    toggle.yes = MAX_METRIC_COUNT;
  }
  if (toggle.no > MAX_METRIC_COUNT) {
    rest ??= newToggle();
    rest.no = toggle.no - MAX_METRIC_COUNT;
    toggle.no = MAX_METRIC_COUNT;
  }
  for (const [variant, count] of toggle.variants) {
    if (count <= MAX_METRIC_COUNT) continue;
    rest ??= newToggle();
    rest.variants.set(variant, count - MAX_METRIC_COUNT);
    toggle.variants.set(variant, MAX_METRIC_COUNT);
  }
  return rest;
}
