/**
 * Indexes for the retention job (`features/metrics/retention.ts`): it deletes instances by
 * `last_seen` and metrics buckets by `hour`, in batches; without these each batch scans the table.
 */
export const sql = /* sql */ `
CREATE INDEX client_instances_last_seen_idx ON client_instances (last_seen);
CREATE INDEX client_metrics_hour_idx ON client_metrics (hour);
CREATE INDEX client_metrics_variants_hour_idx ON client_metrics_variants (hour);
`;
