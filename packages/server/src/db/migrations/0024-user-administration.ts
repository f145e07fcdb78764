/**
 * What user administration keeps:
 * - `login_history`: every login, right or wrong, with the address and user agent it came from
 *   (`GET /api/admin/logins`). It names the user as typed and, when known, by id; it outlives
 *   the user (no foreign key), so an offboarded user's logins stay readable.
 * - `password_links`: one-time links that set a password (reset links an Admin makes, welcome
 *   links of users created without one), stored as the SHA-256 of their secret, as API tokens;
 *   deleted with their user.
 * - `settings`: instance settings Admins change through the admin API (JSON by name).
 */
export const sql = /* sql */ `
CREATE TABLE login_history (
  id bigserial PRIMARY KEY,
  username text NOT NULL,
  user_id integer,
  auth_type text NOT NULL,
  successful boolean NOT NULL,
  failure_reason text,
  ip text,
  user_agent text,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX login_history_created_idx ON login_history (created_at);

CREATE TABLE password_links (
  secret_hash text PRIMARY KEY,
  user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  kind text NOT NULL CHECK (kind IN ('reset', 'welcome')),
  created_by text NOT NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL
);
CREATE INDEX password_links_user_idx ON password_links (user_id);

CREATE TABLE settings (
  name text PRIMARY KEY,
  content jsonb NOT NULL
);
`;
