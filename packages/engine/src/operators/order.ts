/** `*_EQ`, `*_GT`, … read a comparison sign the same way for numbers, dates and versions. */
export type OrderTest = (sign: number) => boolean;

// A constant lookup table (frozen), not state: nothing writes it after the module loads.
const ORDER_TESTS: Readonly<Record<string, OrderTest>> = Object.freeze({
  EQ: (sign) => sign === 0,
  GT: (sign) => sign > 0,
  GTE: (sign) => sign >= 0,
  LT: (sign) => sign < 0,
  LTE: (sign) => sign <= 0,
  // DATE_AFTER / DATE_BEFORE are strict comparisons of the current time.
  AFTER: (sign) => sign > 0,
  BEFORE: (sign) => sign < 0,
});

/** The test for `NUM_GTE` and the like (the part after the family prefix). */
export function orderTest(operator: string): OrderTest {
  const test = ORDER_TESTS[operator.slice(operator.indexOf('_') + 1)];
  if (test === undefined) throw new Error(`no order test for ${operator}`);
  return test;
}
