// Caller addresses against IP rules. A dual-stack listener (`::`) reports an IPv4 client as an
// IPv4-mapped IPv6 address (`::ffff:10.1.2.3`): it is that IPv4 address for IPv4 rules and ranges,
// so listening on `::` does not silently stop IPv4 rules from matching. Other IPv6 addresses that
// embed an IPv4 address (IPv4-compatible `::a.b.c.d`, NAT64 `64:ff9b::/96`, `::ffff:0:a.b.c.d`)
// are not IPv4 addresses.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compile } from '../src/index.js';

type Rule =
  | { readonly strategy: 'remoteAddress'; readonly IPs: string }
  | { readonly constraint: 'IN_CIDR'; readonly values: readonly string[] };

const strategyOf = (rule: Rule) =>
  'strategy' in rule
    ? { name: 'remoteAddress', parameters: { IPs: rule.IPs } }
    : {
        name: 'default',
        constraints: [{ contextName: 'remoteAddress', operator: 'IN_CIDR', values: rule.values }],
      };

function matches(rule: Rule, remoteAddress: string): boolean {
  const snapshot = compile({
    version: 2,
    features: [{ name: 'f', enabled: true, strategies: [strategyOf(rule)] }],
  } as never);
  return snapshot.evaluate('f', { remoteAddress })?.enabled ?? false;
}

const ipv4Range: Rule = { constraint: 'IN_CIDR', values: ['10.0.0.0/8'] };
const ipv4Address: Rule = { constraint: 'IN_CIDR', values: ['10.1.2.3'] };
const ipv4Strategy: Rule = { strategy: 'remoteAddress', IPs: '192.168.1.1, 10.1.2.3' };
const ipv4StrategyRange: Rule = { strategy: 'remoteAddress', IPs: '10.0.0.0/8' };
const mappedRange: Rule = { constraint: 'IN_CIDR', values: ['::ffff:0:0/96'] };

const ROWS: readonly [rule: Rule, address: string, expected: boolean][] = [
  [ipv4Range, '10.1.2.3', true],
  [ipv4Range, '::ffff:10.1.2.3', true],
  [ipv4Range, '::ffff:a01:203', true],
  [ipv4Range, '::FFFF:0A01:0203', true],
  [ipv4Range, '0:0:0:0:0:ffff:10.1.2.3', true],
  [ipv4Range, '::ffff:11.1.2.3', false],
  [ipv4Range, '::10.1.2.3', false],
  [ipv4Range, '64:ff9b::10.1.2.3', false],
  [ipv4Range, '::ffff:0:10.1.2.3', false],
  [ipv4Range, '::1', false],
  [ipv4Address, '::ffff:10.1.2.3', true],
  [ipv4Address, '::ffff:10.1.2.4', false],
  [ipv4Strategy, '10.1.2.3', true],
  [ipv4Strategy, '::ffff:10.1.2.3', true],
  [ipv4Strategy, '::ffff:a01:203', true],
  [ipv4Strategy, '::ffff:10.1.2.4', false],
  [ipv4StrategyRange, '::ffff:10.200.0.1', true],
  [ipv4StrategyRange, '::ffff:11.0.0.1', false],
  // IPv6 rules see the IPv6 address, as before.
  [mappedRange, '::ffff:10.1.2.3', true],
  [{ constraint: 'IN_CIDR', values: ['::ffff:10.1.2.3'] }, '::ffff:a01:203', true],
  [{ constraint: 'IN_CIDR', values: ['2001:db8::/32'] }, '::ffff:10.1.2.3', false],
];

describe('caller addresses', () => {
  for (const [rule, address, expected] of ROWS) {
    const name = 'strategy' in rule ? `remoteAddress ${rule.IPs}` : `IN_CIDR ${rule.values}`;
    it(`${name} ${expected ? 'matches' : 'does not match'} ${address}`, () => {
      assert.equal(matches(rule, address), expected);
    });
  }
});
