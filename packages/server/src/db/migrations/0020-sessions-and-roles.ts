/**
 * Login sessions, kept in the database so they survive a restart and every server process on the
 * same database honours them. The session id is a random secret in the cookie; only its hash is
 * stored (as API tokens and signup links). Expiry is absolute (`expires_at`) and idle
 * (`last_seen_at`, compared with the idle timeout the server runs with).
 *
 * Every user gets a root role: the admin guard reads the role from it, and a user without one
 * (a row written by hand or by another tool) becomes a Viewer rather than someone nobody can see.
 */
export const sql = /* sql */ `
CREATE TABLE user_sessions (
  id_hash text PRIMARY KEY,
  user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL,
  last_seen_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL
);
CREATE INDEX user_sessions_user_idx ON user_sessions (user_id);
CREATE INDEX user_sessions_expires_idx ON user_sessions (expires_at);

INSERT INTO role_user (role_id, user_id)
SELECT viewer.id, u.id
  FROM users u
  CROSS JOIN (SELECT id FROM roles WHERE name = 'Viewer' AND type = 'root' AND project IS NULL) viewer
 WHERE NOT EXISTS (
   SELECT 1 FROM role_user ru JOIN roles r ON r.id = ru.role_id
    WHERE ru.user_id = u.id AND r.type = 'root'
 );
`;
