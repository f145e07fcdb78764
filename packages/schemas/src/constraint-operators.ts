/**
 * The constraint operators a flag's strategies and segments are written with, by wire name, as
 * Unleash's Admin API takes them: the import schema and the `flags` command's file format both
 * take these. (The engine evaluates these and more, such as `IN_CIDR`, from the client API.)
 */
export const CONSTRAINT_OPERATORS = [
  'IN',
  'NOT_IN',
  'STR_ENDS_WITH',
  'STR_STARTS_WITH',
  'STR_CONTAINS',
  'NUM_EQ',
  'NUM_GT',
  'NUM_GTE',
  'NUM_LT',
  'NUM_LTE',
  'DATE_AFTER',
  'DATE_BEFORE',
  'SEMVER_EQ',
  'SEMVER_GT',
  'SEMVER_LT',
  'SEMVER_GTE',
  'SEMVER_LTE',
  'REGEX',
] as const;

export type ConstraintOperator = (typeof CONSTRAINT_OPERATORS)[number];
