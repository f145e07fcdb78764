/**
 * What single sign-on keeps:
 * - `oidc_logins`: OpenID Connect logins under way, from `GET /auth/oidc/login` to the callback,
 *   by the SHA-256 of their `state` (the callback takes and deletes the row, so a state or code
 *   is used once): the `nonce`, the PKCE verifier and the SHA-256 of the random value in the
 *   browser's login cookie (the callback is honoured only in the browser that started it).
 * - `groups`: groups with a root role and the identity provider's group names that map to them
 *   (Unleash's groups shape: `mappingsSSO`, `rootRole`).
 * - `user_sessions.auth_type`: how the session was opened (`password`, `oidc`), so a logout
 *   knows whether to end the provider's session too.
 */
export const sql = /* sql */ `
CREATE TABLE oidc_logins (
  state_hash text PRIMARY KEY,
  browser_hash text NOT NULL,
  nonce text NOT NULL,
  code_verifier text NOT NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL
);
CREATE INDEX oidc_logins_expires_idx ON oidc_logins (expires_at);

CREATE TABLE groups (
  id serial PRIMARY KEY,
  name text NOT NULL,
  description text,
  root_role_id integer REFERENCES roles (id) ON DELETE SET NULL,
  mappings_sso jsonb NOT NULL DEFAULT '[]'::jsonb,
  created_by text,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX groups_name_idx ON groups (lower(name));

ALTER TABLE user_sessions ADD COLUMN auth_type text NOT NULL DEFAULT 'password';
`;
