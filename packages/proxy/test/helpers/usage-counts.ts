/** Counts of one flag, as the upstream receives them. */
export interface Counts {
  yes: number;
  no: number;
  variants: Record<string, number>;
}

/** appName → flag → counts */
export type Expected = Map<string, Map<string, Counts>>;

/** Adds `times` evaluations of `flag` by `app` (a variant counts as a yes with that variant). */
export function add(
  expected: Expected,
  app: string,
  flag: string,
  enabled: boolean,
  variant?: string,
  times = 1,
) {
  let flags = expected.get(app);
  if (flags === undefined) {
    flags = new Map();
    expected.set(app, flags);
  }
  let counts = flags.get(flag);
  if (counts === undefined) {
    counts = { yes: 0, no: 0, variants: {} };
    flags.set(flag, counts);
  }
  if (enabled) counts.yes += times;
  else counts.no += times;
  if (variant !== undefined) counts.variants[variant] = (counts.variants[variant] ?? 0) + times;
}

/** Adds one flag's counts as received (`variants` are among the `yes`). */
export function addReceived(expected: Expected, app: string, flag: string, counts: Counts) {
  add(expected, app, flag, true, undefined, counts.yes);
  add(expected, app, flag, false, undefined, counts.no);
  for (const [variant, count] of Object.entries(counts.variants ?? {})) {
    add(expected, app, flag, true, variant, count);
    add(expected, app, flag, true, undefined, -count);
  }
}

/** Sums per-application metrics bodies (`POST /client/metrics`) per app and flag. */
// biome-ignore lint/suspicious/noExplicitAny: report bodies as received
export function received(reports: any[]): Expected {
  const out: Expected = new Map();
  for (const report of reports) {
    for (const [flag, counts] of Object.entries(report.bucket.toggles) as [string, Counts][])
      addReceived(out, report.appName, flag, counts);
  }
  return out;
}

/** Sums the `metrics` entries of bulk bodies per app and flag. */
// biome-ignore lint/suspicious/noExplicitAny: bulk bodies as received
export function receivedBulk(bodies: any[]): Expected {
  const out: Expected = new Map();
  for (const body of bodies)
    for (const metric of body.metrics) addReceived(out, metric.appName, metric.featureName, metric);
  return out;
}

/** `expected` as plain objects (flags sorted), for `deepEqual`. */
export function plain(expected: Expected) {
  return Object.fromEntries(
    [...expected].map(([app, flags]) => [
      app,
      Object.fromEntries([...flags].sort(([a], [b]) => a.localeCompare(b))),
    ]),
  );
}
