/**
 * Frontend tokens (the frontend API's own kind of API token) join admin and client tokens, and
 * SDK instances keep the connection id they send (`UNLEASH-CONNECTION-ID`, or `connectionId` in
 * a bulk report), which tells one SDK connection from another behind the same instance id.
 */
export const sql = /* sql */ `
ALTER TABLE api_tokens DROP CONSTRAINT api_tokens_type_check;
ALTER TABLE api_tokens ADD CONSTRAINT api_tokens_type_check
  CHECK (type IN ('admin', 'client', 'frontend'));
ALTER TABLE client_instances ADD COLUMN connection_id text;
`;
