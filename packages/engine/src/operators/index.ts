import { cidrMatch } from './cidr.js';
import { dateCompare } from './date.js';
import { membership } from './membership.js';
import { numberCompare } from './number.js';
import type { OperatorBuilder } from './operator.js';
import { regexMatch } from './regex.js';
import { semverCompare } from './semver.js';
import { stringMatch } from './string.js';

/** Every constraint operator of the client specification, by wire name (a constant table). */
export const OPERATORS: ReadonlyMap<string, OperatorBuilder> = new Map([
  ['IN', membership],
  ['NOT_IN', membership],
  ['STR_STARTS_WITH', stringMatch],
  ['STR_ENDS_WITH', stringMatch],
  ['STR_CONTAINS', stringMatch],
  ['NUM_EQ', numberCompare],
  ['NUM_GT', numberCompare],
  ['NUM_GTE', numberCompare],
  ['NUM_LT', numberCompare],
  ['NUM_LTE', numberCompare],
  ['DATE_AFTER', dateCompare],
  ['DATE_BEFORE', dateCompare],
  ['SEMVER_EQ', semverCompare],
  ['SEMVER_GT', semverCompare],
  ['SEMVER_GTE', semverCompare],
  ['SEMVER_LT', semverCompare],
  ['SEMVER_LTE', semverCompare],
  ['REGEX', regexMatch],
  ['IN_CIDR', cidrMatch],
]);
