/**
 * The event log as unleash-server keeps it: who (name and user id), what (`data`) and what it
 * replaced (`pre_data`), and the flag's tags at the time. Writes record their events themselves,
 * with the actor, in their transaction (features/events), so the trigger that recorded
 * `feature-environment-enabled` without an actor goes: keeping it would count each enabling twice.
 */
export const sql = /* sql */ `
ALTER TABLE events ADD COLUMN created_by_user_id integer;
ALTER TABLE events ADD COLUMN pre_data jsonb;
ALTER TABLE events ADD COLUMN tags jsonb NOT NULL DEFAULT '[]';
CREATE INDEX events_feature_name_idx ON events (feature_name, id) WHERE feature_name IS NOT NULL;
CREATE INDEX events_project_idx ON events (project, id) WHERE project IS NOT NULL;
CREATE INDEX events_type_idx ON events (type, id);

DROP TRIGGER feature_environment_enabled ON feature_environments;
DROP FUNCTION record_feature_environment_enabled();
`;
