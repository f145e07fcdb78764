/**
 * The context fields every unleash-server 8.2 has from its start, with its descriptions, sort
 * orders and stickiness: scripts, Terraform configurations and the pages' constraint editors
 * offer them without anyone creating them first. A field an operator already made under one of
 * these names keeps what it has.
 */
export const sql = /* sql */ `
INSERT INTO context_fields (name, description, stickiness, sort_order, legal_values) VALUES
  ('environment', 'Allows you to constrain on application environment', false, 0, '[]'),
  ('userId', 'Allows you to constrain on userId', false, 1, '[]'),
  ('appName', 'Allows you to constrain on application name', false, 2, '[]'),
  ('currentTime', 'Allows you to constrain on date values', false, 3, '[]'),
  ('sessionId', 'Allows you to constrain on sessionId', true, 4, '[]')
ON CONFLICT (name) DO NOTHING;
`;
