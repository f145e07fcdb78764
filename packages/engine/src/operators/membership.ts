import type { OperatorBuilder } from './operator.js';

/** IN / NOT_IN: exact, case-sensitive membership in a Set built once. A missing field is "not in". */
export const membership: OperatorBuilder = (spec) => {
  const values = new Set(spec.values);
  if (spec.operator === 'IN') return (value) => value !== undefined && values.has(value);
  return (value) => value === undefined || !values.has(value);
};
