/**
 * The retention job deletes applications not seen (`seen_at`) once their instances have gone
 * (issue 40: every app name a report carried was kept for ever); without this index each of its
 * batches scans the table.
 */
export const sql = /* sql */ `
CREATE INDEX client_applications_seen_at_idx ON client_applications (seen_at);
`;
