import { BlockList, isIP } from 'node:net';

/** Which upstream URLs skip the forward proxy. */
export type ProxyBypass = (url: URL) => boolean;

interface HostRule {
  /** Lowercase host name, matched with its subdomains; or an IP address, matched exactly. */
  readonly host: string;
  /** Only this port when set. */
  readonly port: string | undefined;
}

function defaultPort(url: URL): string {
  return url.port !== '' ? url.port : url.protocol === 'https:' ? '443' : '80';
}

function stripBrackets(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/** `host`, `host:port`, `[v6]`, `[v6]:port` or a bare IPv6 address. */
function hostRule(entry: string): HostRule {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
  if (bracketed) return { host: bracketed[1] as string, port: bracketed[2] };
  if (isIP(entry) === 6) return { host: entry, port: undefined };
  const withPort = /^(.*):(\d+)$/.exec(entry);
  const host = withPort ? (withPort[1] as string) : entry;
  // `.example.com` and `*.example.com` mean what `example.com` means: it and its subdomains.
  return { host: host.replace(/^\*?\./, ''), port: withPort?.[2] };
}

/**
 * The `NO_PROXY` list as curl and most HTTP clients read it: `*` (no proxy at all), host names
 * (matching their subdomains too; a leading `.` or `*.` changes nothing), IP addresses, CIDR
 * ranges, each optionally with `:port`. Compared with the URL's host, not with what it resolves to.
 * Written here because `proxy-from-env`, the usual package, reads `process.env` itself (the proxy
 * takes its settings in code too) and knows no CIDR ranges.
 */
export function proxyBypass(entries: readonly string[]): ProxyBypass {
  const rules: HostRule[] = [];
  const ranges = new BlockList();
  let hasRanges = false;
  for (const raw of entries) {
    const entry = raw.trim().toLowerCase();
    if (entry === '') continue;
    if (entry === '*') return () => true;
    const cidr = /^([^/]+)\/(\d{1,3})$/.exec(entry);
    const family = cidr ? isIP(cidr[1] as string) : 0;
    if (cidr && family !== 0) {
      ranges.addSubnet(cidr[1] as string, Number(cidr[2]), family === 4 ? 'ipv4' : 'ipv6');
      hasRanges = true;
    } else {
      rules.push(hostRule(entry));
    }
  }
  if (rules.length === 0 && !hasRanges) return () => false;
  return (url) => {
    const host = stripBrackets(url.hostname.toLowerCase());
    const port = defaultPort(url);
    const family = isIP(host);
    if (hasRanges && family !== 0 && ranges.check(host, family === 4 ? 'ipv4' : 'ipv6'))
      return true;
    return rules.some(
      (rule) =>
        (rule.port === undefined || rule.port === port) &&
        (host === rule.host || (family === 0 && host.endsWith(`.${rule.host}`))),
    );
  };
}
