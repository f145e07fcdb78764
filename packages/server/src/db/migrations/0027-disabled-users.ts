/**
 * Users an Admin disables (`users.disabled_at`, null for an active user): a disabled user keeps
 * their row, roles and history but cannot log in, sign in with single sign-on (which does not
 * create them again), use a personal access token or a password link; enabling them clears it.
 */
export const sql = /* sql */ `
ALTER TABLE users ADD COLUMN disabled_at timestamptz;
`;
