import { type OperatorBuilder, singleValue } from './operator.js';
import { orderTest } from './order.js';

/** NUM_*: the constraint value is parsed once; the context value with `Number()` like the SDKs. */
export const numberCompare: OperatorBuilder = (spec, reporter) => {
  const text = singleValue(spec, reporter);
  if (text === undefined) return undefined;
  const target = Number(text);
  if (Number.isNaN(target)) {
    reporter.warn(
      `${spec.operator} constraint on "${spec.contextName}": "${text}" is not a number`,
    );
    return undefined;
  }
  const test = orderTest(spec.operator);
  return (raw) => {
    const value = Number(raw);
    if (Number.isNaN(value)) return false; // the field is missing or not a number
    return test(value < target ? -1 : value > target ? 1 : 0);
  };
};
