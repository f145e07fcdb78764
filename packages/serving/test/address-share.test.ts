import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { addressShare } from '../src/http/address-share.js';

describe('addressShare', () => {
  const cases: Array<[string, string]> = [
    ['127.0.0.1', '127.0.0.1'],
    ['203.0.113.7', '203.0.113.7'],
    // A dual-stack socket reports IPv4 peers so: each is its own share, not one /64 for all.
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['::FFFF:203.0.113.8', '203.0.113.8'],
    // One subscriber's /64, however it is written.
    ['2001:db8:1:2:aaaa:bbbb:cccc:dddd', '2001:db8:1:2::/64'],
    ['2001:0db8:0001:0002:0:0:0:1', '2001:db8:1:2::/64'],
    ['2001:db8:1:2::1', '2001:db8:1:2::/64'],
    ['2001:DB8:1:2::FFFF', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['2001:db8:1:3::1', '2001:db8:1:3::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['::', '0:0:0:0::/64'],
    ['64:ff9b::192.0.2.1', '64:ff9b:0:0::/64'],
  ];
  for (const [address, share] of cases) {
    it(`counts ${address} as ${share}`, () => assert.equal(addressShare(address), share));
  }
});
