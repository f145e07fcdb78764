/**
 * What the admin API manages beyond single flags: tags that exist on their own (unleash-server's
 * `/api/admin/tags`; a flag's tags stay in `feature_tags`, and a tag a flag carries counts as
 * existing), tag type colours, deprecated strategy definitions, feature type descriptions and
 * unleash-server's `sunset` type, and personal access tokens (stored as the SHA-256 of their
 * secret, as API tokens are, and deleted with their user).
 */
export const sql = /* sql */ `
CREATE TABLE tags (
  type text NOT NULL REFERENCES tag_types (name) ON DELETE CASCADE,
  value text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (type, value)
);
INSERT INTO tags (type, value) SELECT DISTINCT tag_type, tag_value FROM feature_tags;

ALTER TABLE tag_types ADD COLUMN color text;

ALTER TABLE strategies ADD COLUMN deprecated boolean NOT NULL DEFAULT false;

ALTER TABLE feature_types ADD COLUMN description text;
UPDATE feature_types SET description = CASE id
  WHEN 'release' THEN 'Ships new or unfinished work gradually; expected to live about 40 days.'
  WHEN 'experiment' THEN 'Compares variants (A/B and multivariate tests); expected to live about 40 days.'
  WHEN 'operational' THEN 'Moves between technical implementations safely; expected to live about 7 days.'
  WHEN 'kill-switch' THEN 'Turns a capability off quickly when needed; permanent.'
  WHEN 'permission' THEN 'Grants access by role or entitlement; permanent.'
  END;
INSERT INTO feature_types (id, name, lifetime_days, description) VALUES
  ('sunset', 'Sunset', 90, 'Plans the removal of an existing capability; expected to live about 90 days.')
  ON CONFLICT (id) DO NOTHING;

CREATE TABLE personal_access_tokens (
  id serial PRIMARY KEY,
  user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  description text NOT NULL,
  secret_hash text NOT NULL UNIQUE,
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  seen_at timestamptz
);
CREATE UNIQUE INDEX personal_access_tokens_description_idx
  ON personal_access_tokens (user_id, description);
`;
