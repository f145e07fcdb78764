import { type IpRange, parseIpRange } from '../parse/ip.js';
import type { OperatorBuilder } from './operator.js';

/** IN_CIDR: the address is one of the listed addresses or inside one of the ranges (IPv4, IPv6). */
export const cidrMatch: OperatorBuilder = (spec, reporter, evaluation) => {
  const ranges: IpRange[] = [];
  for (const text of spec.values) {
    const range = parseIpRange(text);
    if (range === undefined)
      reporter.warn(`IN_CIDR constraint: "${text}" is not an address or range`);
    else ranges.push(range);
  }
  if (ranges.length === 0) return undefined;
  const addresses = evaluation.addresses;
  return (value) => value !== undefined && addresses.inRanges(value, ranges);
};
