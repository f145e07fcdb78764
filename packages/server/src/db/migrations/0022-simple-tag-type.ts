/**
 * The tag type every unleash-server has from its start, `simple`: scripts and Terraform
 * configurations written for unleash-server tag flags with it without creating it first. A
 * database that already has one keeps its own.
 */
export const sql = /* sql */ `
INSERT INTO tag_types (name, description, icon, color)
VALUES ('simple', 'Used to simplify filtering of features', '#', '#FFFFFF')
ON CONFLICT (name) DO NOTHING;
`;
