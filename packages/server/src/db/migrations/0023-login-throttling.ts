/**
 * Failed logins, counted in the database so every server process on it throttles alike (issue
 * #46). A row counts the failures of one user from one address (IPv6 by /64), of one user from
 * every address (`address` empty) or from one address for every user (`user_key` empty) since
 * the counter was last quiet for the time the server forgets failures after; `user_key` is
 * `id:<user id>` when the typed name was a user's username or email (any case), else
 * `name:<the name lowercased and trimmed>`. Rows quiet for longer are deleted at the next failure,
 * and a user's row for an address at that user's next login from it.
 */
export const sql = /* sql */ `
CREATE TABLE login_failures (
  user_key text NOT NULL,
  address text NOT NULL,
  failures integer NOT NULL,
  last_failure_at timestamptz NOT NULL,
  PRIMARY KEY (user_key, address)
);
CREATE INDEX login_failures_last_failure_idx ON login_failures (last_failure_at);
`;
