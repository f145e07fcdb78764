import { isIPv6 } from 'node:net';

/** An IPv4 address written in IPv6 (`::ffff:a.b.c.d`, as a dual-stack socket reports IPv4 peers). */
const MAPPED_IPV4 = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/;

/**
 * The part of a client address that one share of a per-address cap is counted by: an IPv4 address
 * whole (also when written as IPv4-mapped IPv6), an IPv6 address by its /64, since one subscriber
 * is given a whole /64 and may use any address in it (the report limit counts the same way).
 */
export function addressShare(address: string): string {
  const zone = address.indexOf('%');
  const bare = (zone < 0 ? address : address.slice(0, zone)).toLowerCase();
  if (!isIPv6(bare)) return bare;
  const mapped = MAPPED_IPV4.exec(bare);
  if (mapped !== null) return mapped[1] as string;
  const [head = '', tail] = bare.split('::');
  const groups = head === '' ? [] : head.split(':');
  if (tail !== undefined) {
    const after = tail === '' ? [] : tail.split(':');
    // An embedded IPv4 tail (`::1.2.3.4`) stands for two groups.
    const written = groups.length + after.length + (tail.includes('.') ? 1 : 0);
    for (let missing = 8 - written; missing > 0; missing--) groups.push('0');
    groups.push(...after);
  }
  const prefix = groups.slice(0, 4).map((group) => Number.parseInt(group, 16).toString(16));
  return `${prefix.join(':')}::/64`;
}
