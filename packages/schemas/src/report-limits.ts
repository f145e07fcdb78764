/**
 * The bounds of every usage report and registration (issue 40), one source for flags-proxy (which
 * refuses what its upstream would refuse, and keeps pending usage within them) and flags-server
 * (which stores what passes them).
 */

/** The longest name of anything a report names: application, flag, variant, environment, instance. */
export const MAX_NAME_LENGTH = 255;
/** The longest free text of a report (platform, versions, impact-metric labels). */
export const MAX_TEXT_LENGTH = 255;
/** Distinct variant names one flag's counts may carry in one report (the issue saw 60,000). */
export const MAX_REPORT_VARIANTS = 100;
/** Distinct flag names one report's bucket may carry. */
export const MAX_REPORT_FLAGS = 10_000;
/** Strategy names one registration may list (SDKs list a dozen or so). */
export const MAX_REGISTERED_STRATEGIES = 100;
/**
 * The latest instant a report may name, epoch ms (exclusive): 10000-01-01T00:00:00Z. Instants
 * before 1970 or from year 10000 on are not real measurements, and some cannot be stored.
 */
export const MAX_INSTANT_MS = 253_402_300_800_000;

/**
 * A name: no control characters (NUL cannot be stored in PostgreSQL text) and no lone UTF-16
 * surrogates (PostgreSQL's jsonb refuses them). Ajv compiles patterns with the `u` flag, so a
 * surrogate pair is one code point outside the refused range.
 */
const NAME_PATTERN = '^[^\\u0000-\\u001f\\u007f\\ud800-\\udfff]*$';
/** Free text: line breaks and tabs pass; NUL and lone surrogates do not (see `NAME_PATTERN`). */
const TEXT_PATTERN = '^[^\\u0000\\ud800-\\udfff]*$';

/** A required name (at least one character). */
export const nameSchema = {
  type: 'string',
  minLength: 1,
  maxLength: MAX_NAME_LENGTH,
  pattern: NAME_PATTERN,
} as const;

/** A name that may be empty. */
export const optionalNameSchema = {
  type: 'string',
  maxLength: MAX_NAME_LENGTH,
  pattern: NAME_PATTERN,
} as const;

/** The names of an object's keys (flags, variants, labels). */
export const propertyNameSchema = { maxLength: MAX_NAME_LENGTH, pattern: NAME_PATTERN } as const;

/** Free text of at most `maxLength` characters. */
export function textSchema<const Max extends number>(maxLength: Max) {
  return { type: 'string', maxLength, pattern: TEXT_PATTERN } as const;
}

/**
 * A bucket boundary or start time: an ISO 8601 date-time string (what the SDKs send) or epoch
 * milliseconds from 1970 to 9999. A string's range is `instantMs`'s check, which both services
 * make where an instant is stored (a pattern here would also hide the format's clearer message).
 */
export const instantSchema = {
  type: ['string', 'number'],
  format: 'date-time',
  minimum: 0,
  maximum: MAX_INSTANT_MS - 1,
} as const;

/** Epoch ms of an instant (ISO string or epoch ms); NaN when unparseable or outside 1970..9999. */
export function instantMs(value: string | number): number {
  const ms = typeof value === 'number' ? value : Date.parse(value);
  return ms >= 0 && ms < MAX_INSTANT_MS ? ms : Number.NaN;
}
