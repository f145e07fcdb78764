import { type IpRange, parseIpRange } from '../parse/ip.js';
import { listParameter, type StrategyBuilder } from './strategy.js';

/**
 * `remoteAddress`: the context address equals one of `IPs`, or lies in one of its IPv4 ranges
 * (the SDKs treat only IPv4 entries as ranges; other entries match as exact text). An IPv4-mapped
 * address (`::ffff:10.1.2.3`) matches the IPv4 entries as its IPv4 address. An address over the
 * value limit is not compared.
 */
export const remoteAddress: StrategyBuilder = (parameters, environment) => {
  const { maxValueLength } = environment;
  const addresses = environment.evaluation.addresses;
  const exact = new Set<string>();
  const ranges: IpRange[] = [];
  for (const entry of listParameter(parameters, 'IPs')) {
    exact.add(entry);
    const range = parseIpRange(entry);
    if (range !== undefined && !range.v6) ranges.push(range);
  }
  return (context) => {
    const address = context.remoteAddress;
    if (address === undefined || address.length > maxValueLength) return false;
    return exact.has(address) || addresses.inRanges(address, ranges);
  };
};
