import { ApiError } from '../errors.js';

/**
 * unleash-server's search filters: `IS:value`, `IS_ANY_OF:a,b`, `INCLUDE:…`, `INCLUDE_ANY_OF:…`,
 * or a bare value. Returns the values (any of which matches); `undefined` when not given.
 * Operators that exclude (`IS_NOT`, `DO_NOT_INCLUDE`, …) are refused rather than ignored.
 */
export function filterValues(parameter: string, raw: string | undefined): string[] | undefined {
  if (raw === undefined || raw === '') return undefined;
  const match = /^([A-Z_]+):(.*)$/s.exec(raw);
  if (!match) return [raw];
  const [, operator, rest] = match as unknown as [string, string, string];
  switch (operator) {
    case 'IS':
    case 'INCLUDE':
      return [rest];
    case 'IS_ANY_OF':
    case 'INCLUDE_ANY_OF':
      return rest.split(',').filter((value) => value !== '');
    default:
      throw new ApiError(
        'BAD_DATA',
        `The filter ${parameter} uses the operator ${operator}, which this server does not support (use IS, IS_ANY_OF, INCLUDE or INCLUDE_ANY_OF).`,
      );
  }
}

/** A date filter (`IS:YYYY-MM-DD` or a bare date). */
export function filterDate(parameter: string, raw: string | undefined): string | undefined {
  const values = filterValues(parameter, raw);
  if (values === undefined) return undefined;
  const [value] = values;
  if (values.length !== 1 || !/^\d{4}-\d{2}-\d{2}$/.test(value ?? '')) {
    throw new ApiError('BAD_DATA', `The filter ${parameter} must be one date (YYYY-MM-DD).`);
  }
  return value;
}

/** `offset` and `limit` of unleash-server's searches. */
export const pagingProperties = {
  offset: { type: 'integer', minimum: 0, default: 0 },
  limit: { type: 'integer', minimum: 1, maximum: 1000, default: 50 },
} as const;
