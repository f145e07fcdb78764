/**
 * The client change log behind `/api/client/delta` and `/api/client/streaming`: the events SDKs
 * apply (one row each, in commit order), the last recorded client-visible state of every
 * environment (a hash per flag and per segment, diffed by each write), and per environment the
 * id up to which its events may have been compacted away.
 */
export const sql = /* sql */ `
CREATE TABLE client_change_events (
  id bigserial PRIMARY KEY,
  environment text NOT NULL,
  -- The flag's project (feature events), for token and query project filters.
  project text,
  feature_name text,
  -- The event as SDKs receive it, without its eventId.
  event jsonb NOT NULL
);
CREATE INDEX client_change_events_environment_idx ON client_change_events (environment, id);

CREATE TABLE client_change_state (
  environment text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('feature', 'segment')),
  key text NOT NULL,
  project text,
  hash text NOT NULL,
  PRIMARY KEY (environment, kind, key)
);

CREATE TABLE client_change_environments (
  environment text PRIMARY KEY,
  -- Events of this environment with an id up to here may be gone: older ids get a hydration.
  floor bigint NOT NULL
);
`;
