import { compile } from '@flags/engine';
import type { Queryable } from '../db/database.js';
import { ApiError } from '../errors.js';

/**
 * The rules unleash-server 8.2 applies to what a constraint and a variant payload may hold, so
 * that what one refuses (400) the other refuses too and what one takes the other takes. Each
 * problem is one `details` entry that opens with where it is in the request body
 * (`body/constraints/0/value`), as schema errors do, so that a form can put it beside its field.
 */

/** A constraint as the admin API takes it (before defaults are filled in). */
export interface ConstraintInput {
  readonly contextName: string;
  readonly operator: string;
  readonly values?: readonly string[];
  readonly value?: string;
  readonly caseInsensitive?: boolean;
}

/** A variant as the admin API takes it, as far as its payload goes. */
export interface PayloadInput {
  readonly payload?: { readonly type: string; readonly value: string };
}

/** Context field name → its legal values; only fields that have some are listed. */
export type LegalValues = ReadonlyMap<string, ReadonlySet<string>>;

/** Operators that compare against `values` (a list); the others take one `value`. */
const LIST_OPERATORS: ReadonlySet<string> = new Set([
  'IN',
  'NOT_IN',
  'STR_ENDS_WITH',
  'STR_STARTS_WITH',
  'STR_CONTAINS',
]);

/** A number as unleash-server reads one: decimal, optional exponent, finite, a safe integer range. */
const NUMBER = /^\s*[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?\s*$/i;

function isNumber(text: string): boolean {
  if (!NUMBER.test(text)) return false;
  const number = Number(text.trim());
  return Number.isFinite(number) && Math.abs(number) <= Number.MAX_SAFE_INTEGER;
}

/** A date as unleash-server reads one: milliseconds since 1970 when all digits, else what `Date` parses. */
function isDate(text: string): boolean {
  if (text.trim() === '') return false;
  const date = new Date(/^[+-]?\d+(?:\.\d+)?$/.test(text) ? Number.parseFloat(text) : text);
  return !Number.isNaN(date.getTime());
}

/** semver.org 2.0.0, strictly: no leading `v` or `=`, no white space, no leading zeros. */
const SEMVER =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$/;

function isSemver(text: string): boolean {
  const match = text.length <= 256 ? SEMVER.exec(text) : null;
  if (!match) return false;
  return match.slice(1, 4).every((part) => Number(part) <= Number.MAX_SAFE_INTEGER);
}

/** An RE2 pattern (the syntax SDKs evaluate), as the engine compiles it. */
function isPattern(pattern: string, caseInsensitive: boolean): boolean {
  let valid = true;
  compile(
    {
      version: 2,
      features: [
        {
          name: 'pattern',
          enabled: true,
          strategies: [
            {
              name: 'default',
              constraints: [
                { contextName: 'value', operator: 'REGEX', value: pattern, caseInsensitive },
              ],
            },
          ],
        },
      ],
    },
    {
      onWarning: () => {
        valid = false;
      },
    },
  );
  return valid;
}

/** What is wrong with one value of a single-value operator, or `undefined`. */
function singleValueProblem(operator: string, value: string, caseInsensitive: boolean) {
  if (operator.startsWith('NUM_')) return isNumber(value) ? undefined : 'is not a number';
  if (operator.startsWith('DATE_')) return isDate(value) ? undefined : 'is not a date';
  if (operator.startsWith('SEMVER_')) {
    return isSemver(value) ? undefined : 'is not a semantic version (major.minor.patch)';
  }
  if (operator === 'REGEX') {
    return isPattern(value, caseInsensitive) ? undefined : 'is not a valid regular expression';
  }
  return undefined;
}

/**
 * Every problem of `constraints` (at `where`, such as `body/constraints`): a list operator with no
 * value or an empty one, a single-value operator without its value or with one its operator cannot
 * read (a number, a date, a semantic version, a pattern), an empty `value`, and values that are
 * not among the legal values of their context field.
 */
export function constraintProblems(
  constraints: readonly ConstraintInput[],
  legal: LegalValues,
  where: string,
): string[] {
  const problems: string[] = [];
  constraints.forEach((constraint, n) => {
    const at = `${where}/${n}`;
    const { operator, contextName } = constraint;
    const allowed = legal.get(contextName);
    const notLegal = (value: string) =>
      allowed !== undefined && !allowed.has(value)
        ? `"${value}" is not a legal value of context field "${contextName}" (${[...allowed].join(', ')})`
        : undefined;
    if (constraint.value === '') problems.push(`${at}/value must not be empty`);
    if (LIST_OPERATORS.has(operator)) {
      const values = constraint.values ?? [];
      if (values.length === 0) {
        problems.push(`${at}/values must hold at least one value for ${operator}`);
      }
      values.forEach((value, i) => {
        const problem = value === '' ? 'must not be empty' : notLegal(value);
        if (problem) problems.push(`${at}/values/${i} ${problem}`);
      });
      return;
    }
    const value = constraint.value;
    if (value === undefined) {
      problems.push(`${at}/value is required for ${operator} (one value, not a list)`);
      return;
    }
    if (value === '') return;
    const problem =
      singleValueProblem(operator, value, constraint.caseInsensitive ?? false) ?? notLegal(value);
    if (problem) problems.push(`${at}/value "${value}" ${problem}`);
  });
  return problems;
}

/**
 * Every problem of the variants' payloads (at `where`, such as `body/variants`): an empty value,
 * and a `json` one that is not a JSON object or array. `string`, `csv` and `number` payloads are
 * taken as they are, as unleash-server takes them.
 */
export function payloadProblems(variants: readonly PayloadInput[], where: string): string[] {
  const problems: string[] = [];
  variants.forEach((variant, n) => {
    const payload = variant.payload;
    if (!payload) return;
    const at = `${where}/${n}/payload/value`;
    if (payload.value === '') {
      problems.push(`${at} must not be empty`);
    } else if (payload.type === 'json' && !isJsonDocument(payload.value)) {
      problems.push(`${at} must be a JSON object or array when the type is json`);
    }
  });
  return problems;
}

function isJsonDocument(text: string): boolean {
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null;
  } catch {
    return false;
  }
}

/** The legal values of the context fields `names` that have any. */
export async function legalValuesOf(db: Queryable, names: Iterable<string>): Promise<LegalValues> {
  const wanted = [...new Set(names)];
  const legal = new Map<string, Set<string>>();
  if (wanted.length === 0) return legal;
  const rows = await db.query<{ name: string; legalValues: { value: string }[] }>(
    `SELECT name, legal_values AS "legalValues" FROM context_fields
      WHERE name IN (SELECT jsonb_array_elements_text($1::jsonb))
        AND jsonb_array_length(legal_values) > 0`,
    [JSON.stringify(wanted)],
  );
  for (const row of rows) legal.set(row.name, new Set(row.legalValues.map((v) => v.value)));
  return legal;
}

/** 400 `BAD_DATA` listing every problem, when there are any. */
export function refuseProblems(problems: readonly string[]): void {
  if (problems.length === 0) return;
  const more = problems.length > 1 ? ` (and ${problems.length - 1} more in details)` : '';
  throw new ApiError('BAD_DATA', `Request validation failed: ${problems[0]}${more}.`, problems);
}

/** Refuses (400) constraints that break a rule, reading the legal values of the fields they name. */
export async function checkConstraints(
  db: Queryable,
  constraints: readonly ConstraintInput[],
  where: string,
): Promise<void> {
  const legal = await legalValuesOf(
    db,
    constraints.map((constraint) => constraint.contextName),
  );
  refuseProblems(constraintProblems(constraints, legal, where));
}
