/**
 * A version per flag, bumped by every change of the flag, its strategies, variants, environments
 * and dependencies: the `ETag` of `GET /api/admin/projects/:project/features/:feature` and what
 * an `If-Match` is compared with.
 */
export const sql = /* sql */ `
ALTER TABLE features ADD COLUMN version bigint NOT NULL DEFAULT 1;
`;
