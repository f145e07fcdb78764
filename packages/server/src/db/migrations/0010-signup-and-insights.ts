/**
 * Public signup tokens, user fields the admin API reports, project-scoped role assignments, and
 * the daily insights snapshots. The snapshot tables have no foreign keys on purpose: history
 * outlives deleted projects and environments.
 */
export const sql = /* sql */ `
ALTER TABLE users ADD COLUMN is_service boolean NOT NULL DEFAULT false;
ALTER TABLE users ADD COLUMN email_sent boolean NOT NULL DEFAULT false;
ALTER TABLE users ADD COLUMN scim_id text;

-- A user may hold the same project role in several projects: the key includes the project.
ALTER TABLE role_user DROP CONSTRAINT role_user_pkey;
CREATE UNIQUE INDEX role_user_role_user_project_idx ON role_user (role_id, user_id, COALESCE(project, ''));
CREATE INDEX role_user_user_idx ON role_user (user_id);

CREATE TABLE public_signup_tokens (
  secret text PRIMARY KEY,
  name text NOT NULL,
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  created_by text,
  role_id integer NOT NULL REFERENCES roles (id) ON DELETE CASCADE,
  enabled boolean NOT NULL DEFAULT true
);

CREATE TABLE public_signup_tokens_user (
  secret text NOT NULL REFERENCES public_signup_tokens (secret) ON DELETE CASCADE,
  user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (secret, user_id)
);

CREATE INDEX events_environment_created_at_idx ON events (created_at, environment)
  WHERE environment IS NOT NULL;

CREATE TABLE insights_user_trends (
  day date PRIMARY KEY,
  total integer NOT NULL,
  active integer NOT NULL,
  captured_at timestamptz NOT NULL
);

CREATE TABLE insights_flag_trends (
  day date NOT NULL,
  project text NOT NULL,
  total integer NOT NULL,
  stale integer NOT NULL,
  potentially_stale integer NOT NULL,
  health integer NOT NULL,
  time_to_production double precision,
  users integer NOT NULL,
  captured_at timestamptz NOT NULL,
  PRIMARY KEY (day, project)
);

CREATE TABLE insights_metrics_trends (
  day date NOT NULL,
  project text NOT NULL,
  total_yes bigint NOT NULL,
  total_no bigint NOT NULL,
  total_apps integer NOT NULL,
  total_flags integer NOT NULL,
  total_environments integer NOT NULL,
  captured_at timestamptz NOT NULL,
  PRIMARY KEY (day, project)
);

CREATE TABLE insights_environment_trends (
  day date NOT NULL,
  environment_type text NOT NULL,
  total_updates integer NOT NULL,
  captured_at timestamptz NOT NULL,
  PRIMARY KEY (day, environment_type)
);
`;
