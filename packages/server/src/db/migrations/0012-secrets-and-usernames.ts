/** `maskToken` (config/load.ts) in SQL: the scope prefix up to the first `.`, 4 characters, `…`. */
const masked = (column: string) => `CASE WHEN strpos(${column}, '.') > 0
    THEN substr(${column}, 1, strpos(${column}, '.') + 4) || '…'
    ELSE substr(${column}, 1, 4) || '…' END`;

/** `hashSecret` (auth/secrets.ts) in SQL. */
const hashed = (column: string) => `encode(sha256(convert_to(${column}, 'UTF8')), 'hex')`;

/**
 * API tokens and signup links keep the SHA-256 of their secret (looked up by it) and a masked form
 * for lists, never the secret; each gets an integer `id` that names it on admin routes once the
 * secret is no longer shown. Signup-link users now point at the link's id.
 */
export const sql = /* sql */ `
ALTER TABLE api_tokens ADD COLUMN id serial;
ALTER TABLE api_tokens ADD CONSTRAINT api_tokens_id_key UNIQUE (id);
ALTER TABLE api_tokens ADD COLUMN secret_masked text;
UPDATE api_tokens SET secret_masked = ${masked('secret')}, secret = ${hashed('secret')};
ALTER TABLE api_tokens RENAME COLUMN secret TO secret_hash;
ALTER TABLE api_tokens ALTER COLUMN secret_masked SET NOT NULL;
-- Tokens created from FLAGS_ADMIN_TOKENS/FLAGS_CLIENT_TOKENS are deleted at start once no longer
-- configured; older versions created them under these two names.
ALTER TABLE api_tokens ADD COLUMN source text NOT NULL DEFAULT 'api'
  CHECK (source IN ('api', 'config'));
UPDATE api_tokens SET source = 'config'
  WHERE token_name IN ('admin (configured)', 'client (configured)');

ALTER TABLE public_signup_tokens ADD COLUMN id serial;
ALTER TABLE public_signup_tokens ADD CONSTRAINT public_signup_tokens_id_key UNIQUE (id);
ALTER TABLE public_signup_tokens ADD COLUMN secret_masked text;
ALTER TABLE public_signup_tokens_user ADD COLUMN token_id integer;
UPDATE public_signup_tokens_user tu SET token_id = t.id
  FROM public_signup_tokens t WHERE t.secret = tu.secret;
ALTER TABLE public_signup_tokens_user DROP CONSTRAINT public_signup_tokens_user_pkey;
ALTER TABLE public_signup_tokens_user DROP COLUMN secret;
ALTER TABLE public_signup_tokens_user ALTER COLUMN token_id SET NOT NULL;
ALTER TABLE public_signup_tokens_user ADD PRIMARY KEY (token_id, user_id);
ALTER TABLE public_signup_tokens_user ADD CONSTRAINT public_signup_tokens_user_token_id_fkey
  FOREIGN KEY (token_id) REFERENCES public_signup_tokens (id) ON DELETE CASCADE;
UPDATE public_signup_tokens SET secret_masked = ${masked('secret')}, secret = ${hashed('secret')};
ALTER TABLE public_signup_tokens RENAME COLUMN secret TO secret_hash;
ALTER TABLE public_signup_tokens ALTER COLUMN secret_masked SET NOT NULL;
-- A link with the Admin role admits signups only when created with allowAdmin; links stored
-- before have not been, so they stop admitting anyone (recreate them to keep them).
ALTER TABLE public_signup_tokens ADD COLUMN allow_admin boolean NOT NULL DEFAULT false;

-- Usernames are unique whatever their case. Duplicates stored before stop the migration with a
-- message naming them (renaming someone's username silently would be worse than asking).
DO $$
DECLARE
  duplicates text;
BEGIN
  SELECT string_agg(format('"%s" (users %s)', name, ids), ', ' ORDER BY name) INTO duplicates
    FROM (SELECT lower(username) AS name, string_agg(id::text, ', ' ORDER BY id) AS ids
            FROM users WHERE username IS NOT NULL
           GROUP BY lower(username) HAVING count(*) > 1) AS taken;
  IF duplicates IS NOT NULL THEN
    RAISE EXCEPTION 'usernames must be unique (whatever their case) from schema version 12, and these are taken more than once: %. Give all but one user of each another username (UPDATE users SET username = ... WHERE id = ...), then start again; nothing was changed.', duplicates;
  END IF;
END
$$;
CREATE UNIQUE INDEX users_username_idx ON users (lower(username)) WHERE username IS NOT NULL;
`;
