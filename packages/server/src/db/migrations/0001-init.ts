/** The initial schema: configuration, client data, tokens, users and roles, audit events. */
export const sql = /* sql */ `
CREATE TABLE projects (
  id text PRIMARY KEY,
  name text NOT NULL,
  description text,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE environments (
  name text PRIMARY KEY,
  type text NOT NULL,
  sort_order integer NOT NULL DEFAULT 0,
  enabled boolean NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE project_environments (
  project_id text NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  environment_name text NOT NULL REFERENCES environments (name) ON DELETE CASCADE,
  PRIMARY KEY (project_id, environment_name)
);

CREATE TABLE feature_types (
  id text PRIMARY KEY,
  name text NOT NULL,
  lifetime_days integer
);

CREATE TABLE features (
  name text PRIMARY KEY,
  project text NOT NULL REFERENCES projects (id),
  type text NOT NULL DEFAULT 'release',
  description text,
  stale boolean NOT NULL DEFAULT false,
  impression_data boolean NOT NULL DEFAULT false,
  archived_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  created_by_user_id integer
);
CREATE INDEX features_project_idx ON features (project);

CREATE TABLE feature_environments (
  feature_name text NOT NULL REFERENCES features (name) ON DELETE CASCADE,
  environment text NOT NULL REFERENCES environments (name) ON DELETE CASCADE,
  enabled boolean NOT NULL DEFAULT false,
  variants jsonb NOT NULL DEFAULT '[]',
  PRIMARY KEY (feature_name, environment)
);

CREATE TABLE strategies (
  name text PRIMARY KEY,
  title text,
  description text,
  parameters jsonb NOT NULL DEFAULT '[]',
  built_in boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE segments (
  id serial PRIMARY KEY,
  name text NOT NULL,
  description text,
  project text REFERENCES projects (id) ON DELETE CASCADE,
  constraints jsonb NOT NULL DEFAULT '[]',
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX segments_name_idx ON segments (name);

CREATE TABLE feature_strategies (
  id text PRIMARY KEY DEFAULT gen_random_uuid()::text,
  feature_name text NOT NULL REFERENCES features (name) ON DELETE CASCADE,
  environment text NOT NULL REFERENCES environments (name) ON DELETE CASCADE,
  strategy_name text NOT NULL REFERENCES strategies (name),
  title text,
  disabled boolean NOT NULL DEFAULT false,
  sort_order integer NOT NULL DEFAULT 0,
  -- Position in the payload that created it: keeps equal sort_order values in a stable order.
  position integer NOT NULL DEFAULT 0,
  parameters jsonb NOT NULL DEFAULT '{}',
  constraints jsonb NOT NULL DEFAULT '[]',
  variants jsonb NOT NULL DEFAULT '[]',
  segments jsonb NOT NULL DEFAULT '[]',
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX feature_strategies_feature_idx ON feature_strategies (feature_name, environment);

CREATE TABLE context_fields (
  name text PRIMARY KEY,
  description text,
  stickiness boolean NOT NULL DEFAULT false,
  sort_order integer NOT NULL DEFAULT 0,
  legal_values jsonb NOT NULL DEFAULT '[]',
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE tag_types (
  name text PRIMARY KEY,
  description text,
  icon text,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE feature_tags (
  feature_name text NOT NULL REFERENCES features (name) ON DELETE CASCADE,
  tag_type text NOT NULL REFERENCES tag_types (name) ON DELETE CASCADE,
  tag_value text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (feature_name, tag_type, tag_value)
);
CREATE INDEX feature_tags_tag_idx ON feature_tags (tag_type, tag_value);

CREATE TABLE feature_dependencies (
  parent text NOT NULL REFERENCES features (name),
  child text NOT NULL REFERENCES features (name) ON DELETE CASCADE,
  enabled boolean NOT NULL DEFAULT true,
  variants jsonb NOT NULL DEFAULT '[]',
  PRIMARY KEY (parent, child)
);

CREATE TABLE roles (
  id serial PRIMARY KEY,
  name text NOT NULL,
  type text NOT NULL,
  description text,
  project text REFERENCES projects (id) ON DELETE CASCADE
);
CREATE UNIQUE INDEX roles_name_project_idx ON roles (name, COALESCE(project, ''));

CREATE TABLE users (
  id serial PRIMARY KEY,
  name text,
  username text,
  email text,
  image_url text,
  password_hash text,
  login_attempts integer NOT NULL DEFAULT 0,
  seen_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  deleted_at timestamptz
);
CREATE UNIQUE INDEX users_email_idx ON users (lower(email)) WHERE email IS NOT NULL;

CREATE TABLE role_user (
  role_id integer NOT NULL REFERENCES roles (id) ON DELETE CASCADE,
  user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  project text,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (role_id, user_id)
);

CREATE TABLE api_tokens (
  secret text PRIMARY KEY,
  token_name text NOT NULL,
  type text NOT NULL CHECK (type IN ('admin', 'client')),
  environment text,
  projects jsonb NOT NULL DEFAULT '["*"]',
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz,
  seen_at timestamptz
);

CREATE TABLE client_applications (
  app_name text PRIMARY KEY,
  strategies jsonb NOT NULL DEFAULT '[]',
  created_at timestamptz NOT NULL DEFAULT now(),
  seen_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE client_instances (
  app_name text NOT NULL,
  instance_id text NOT NULL,
  environment text NOT NULL,
  sdk_version text,
  client_ip text,
  started text,
  interval_ms integer,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_seen timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (app_name, instance_id, environment)
);

CREATE TABLE client_metrics (
  feature_name text NOT NULL,
  app_name text NOT NULL,
  environment text NOT NULL,
  hour timestamptz NOT NULL,
  yes bigint NOT NULL DEFAULT 0,
  no bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (feature_name, app_name, environment, hour)
);

CREATE TABLE client_metrics_variants (
  feature_name text NOT NULL,
  app_name text NOT NULL,
  environment text NOT NULL,
  hour timestamptz NOT NULL,
  variant text NOT NULL,
  count bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (feature_name, app_name, environment, hour, variant)
);

CREATE TABLE events (
  id bigserial PRIMARY KEY,
  type text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  created_by text NOT NULL,
  feature_name text,
  project text,
  environment text,
  data jsonb
);
CREATE INDEX events_created_at_idx ON events (created_at);

-- One row: the configuration revision (bumped in the same transaction as every write that the
-- client API can see) and the token revision (bumped by every token change).
CREATE TABLE revision (
  id integer PRIMARY KEY CHECK (id = 1),
  config bigint NOT NULL,
  tokens bigint NOT NULL
);
INSERT INTO revision (id, config, tokens) VALUES (1, 1, 1);

INSERT INTO projects (id, name, description) VALUES ('default', 'Default', 'Default project');
INSERT INTO environments (name, type, sort_order) VALUES
  ('development', 'development', 1),
  ('production', 'production', 2);
INSERT INTO project_environments (project_id, environment_name) VALUES
  ('default', 'development'),
  ('default', 'production');

INSERT INTO feature_types (id, name, lifetime_days) VALUES
  ('release', 'Release', 40),
  ('experiment', 'Experiment', 40),
  ('operational', 'Operational', 7),
  ('kill-switch', 'Kill switch', NULL),
  ('permission', 'Permission', NULL);

INSERT INTO strategies (name, title, built_in) VALUES
  ('default', 'Standard', true),
  ('flexibleRollout', 'Gradual rollout', true),
  ('userWithId', 'UserIDs', true),
  ('remoteAddress', 'IPs', true),
  ('applicationHostname', 'Hosts', true),
  ('gradualRolloutRandom', 'Random rollout', true),
  ('gradualRolloutSessionId', 'Session rollout', true),
  ('gradualRolloutUserId', 'User rollout', true);

INSERT INTO roles (name, type, description) VALUES
  ('Admin', 'root', 'Users with the root admin role have superuser access.'),
  ('Editor', 'root', 'Users with the root editor role can create and change configuration.'),
  ('Viewer', 'root', 'Users with the root viewer role can only read configuration.');
INSERT INTO roles (name, type, description, project) VALUES
  ('Owner', 'project', 'Users with the project owner role have full control over the project.', NULL),
  ('Member', 'project', 'Users with the project member role can change the project configuration.', NULL);
`;
