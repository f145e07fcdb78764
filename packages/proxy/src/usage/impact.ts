import type { ImpactMetric } from '@flags/schemas';

type Labels = Readonly<Record<string, string>> | null | undefined;

interface NumericSeries {
  readonly labels: Labels;
  value: number;
}

interface HistogramSeries {
  readonly labels: Labels;
  count: number;
  sum: number;
  /** Cumulative count per upper bound, by the bound's text (`'0.5'`, `'+Inf'`). */
  readonly buckets: Map<string, { readonly le: number | '+Inf'; count: number }>;
}

/** Upper bounds kept per histogram series (SDKs use a fixed dozen or so). */
const MAX_BOUNDS = 100;

/** One metric's series, by label set. */
type Kept =
  | {
      readonly name: string;
      readonly help: string;
      readonly type: 'counter' | 'gauge';
      readonly series: Map<string, NumericSeries>;
    }
  | {
      readonly name: string;
      readonly help: string;
      readonly type: 'histogram';
      readonly series: Map<string, HistogramSeries>;
    };

/** The key of a label set: the same labels in any order are one series. */
function labelsKey(labels: Labels): string {
  if (labels === null || labels === undefined) return '';
  return JSON.stringify(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** Estimated bytes of a kept series or histogram bound beside its labels. */
const SERIES_BYTES = 128;

/**
 * Impact metrics (counters, gauges, histograms that SDKs report beside flag counts), merged as they
 * arrive so a busy application costs one entry per series, not one per report: counters and
 * histograms add up, a gauge keeps its latest value. At most `maxSeries` series are kept, each only
 * if `admit` grants its estimated bytes; samples of further series are dropped (and reported to
 * `onDrop`). A metric name arriving with another type than the kept one is dropped too.
 */
export class ImpactMetrics {
  private readonly metrics = new Map<string, Kept>();
  private seriesCount = 0;

  constructor(
    private readonly maxSeries: number,
    private readonly onDrop: (samples: number) => void,
    /** Whether `bytes` more may be kept (the pending-usage budget); always, unless given. */
    private readonly admit: (bytes: number) => boolean = () => true,
  ) {}

  get size(): number {
    return this.metrics.size;
  }

  /**
   * Adds one reported metric. `older`: it predates what is kept (a failed send merged back), so a
   * kept gauge value wins.
   */
  add(metric: ImpactMetric, older = false): void {
    let kept = this.metrics.get(metric.name);
    if (kept === undefined) {
      // A metric is kept only with a series of its own, so names alone cannot take memory.
      if (metric.samples.length === 0) return;
      const bytes = SERIES_BYTES + 2 * (metric.name.length + (metric.help?.length ?? 0));
      if (this.seriesCount >= this.maxSeries || !this.admit(bytes)) {
        this.onDrop(metric.samples.length);
        return;
      }
      kept = {
        name: metric.name,
        help: metric.help ?? '',
        type: metric.type,
        series: new Map(),
      } as Kept;
      this.metrics.set(metric.name, kept);
    } else if (kept.type !== metric.type) {
      this.onDrop(metric.samples.length);
      return;
    }
    if (metric.type === 'histogram') {
      const series = kept.series as Map<string, HistogramSeries>;
      for (const sample of metric.samples) {
        const target = this.series(series, labelsKey(sample.labels), () => ({
          labels: sample.labels,
          count: 0,
          sum: 0,
          buckets: new Map(),
        }));
        if (target === undefined) continue;
        target.count += sample.count;
        target.sum += sample.sum;
        for (const bucket of sample.buckets) {
          const key = String(bucket.le);
          const have = target.buckets.get(key);
          if (have !== undefined) have.count += bucket.count;
          else if (target.buckets.size < MAX_BOUNDS && this.admit(SERIES_BYTES))
            target.buckets.set(key, { le: bucket.le, count: bucket.count });
          else this.onDrop(1);
        }
      }
      return;
    }
    const series = kept.series as Map<string, NumericSeries>;
    for (const sample of metric.samples) {
      const key = labelsKey(sample.labels);
      const fresh = !series.has(key);
      const target = this.series(series, key, () => ({ labels: sample.labels, value: 0 }));
      if (target === undefined) continue;
      if (metric.type === 'counter') target.value += sample.value;
      else if (fresh || !older) target.value = sample.value;
    }
  }

  /** Every kept metric in the wire form, series in arrival order. */
  toWire(): ImpactMetric[] {
    return [...this.metrics.values()].map((kept) => wire(kept));
  }

  /** The series of `key`, created if there is room. */
  private series<T>(series: Map<string, T>, key: string, create: () => T): T | undefined {
    let target = series.get(key);
    if (target !== undefined) return target;
    if (this.seriesCount >= this.maxSeries || !this.admit(SERIES_BYTES + 2 * key.length)) {
      this.onDrop(1);
      return undefined;
    }
    target = create();
    series.set(key, target);
    this.seriesCount++;
    return target;
  }
}

function wire(kept: Kept): ImpactMetric {
  const base = { name: kept.name, help: kept.help };
  if (kept.type === 'histogram') {
    return {
      ...base,
      type: 'histogram',
      samples: [...kept.series.values()].map((series) => ({
        ...(series.labels === undefined ? {} : { labels: series.labels }),
        count: series.count,
        sum: series.sum,
        buckets: [...series.buckets.values()].map(({ le, count }) => ({ le, count })),
      })),
    };
  }
  return {
    ...base,
    type: kept.type,
    samples: [...kept.series.values()].map((series) => ({
      ...(series.labels === undefined ? {} : { labels: series.labels }),
      value: series.value,
    })),
  };
}
