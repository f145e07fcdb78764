import { type OperatorBuilder, singleValue } from './operator.js';
import { orderTest } from './order.js';

/**
 * DATE_AFTER / DATE_BEFORE compare the context's currentTime, or else the evaluation's time, with a
 * date parsed once.
 */
export const dateCompare: OperatorBuilder = (spec, reporter, evaluation) => {
  const text = singleValue(spec, reporter);
  if (text === undefined) return undefined;
  const targetMs = Date.parse(text);
  if (Number.isNaN(targetMs)) {
    reporter.warn(`${spec.operator} constraint: "${text}" is not a date`);
    return undefined;
  }
  const test = orderTest(spec.operator);
  return (_value, context) => {
    const given = context.currentTime;
    let time: number;
    if (given === undefined) {
      time = evaluation.now();
      // On the clock, the answer flips once, when now passes the date; after that it is final.
      if (time <= targetMs) evaluation.holdsUntil(targetMs);
    } else {
      time = given.getTime();
    }
    // A sign, not the difference: a small integer passes to `test` without boxing a double.
    return test(time > targetMs ? 1 : time < targetMs ? -1 : 0);
  };
};
