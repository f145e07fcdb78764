import { compile as compileAddresses } from '@fastify/proxy-addr';

/** The `trustProxy` option: every sender, none, a hop count, or the proxies' addresses/CIDRs. */
export type TrustProxy = boolean | number | readonly string[];

/**
 * Whether `trustProxy` lets a forwarded address be the request address: then the request address
 * is the caller's, and a `remoteAddress` the caller sends is not needed (nor trusted) by default.
 */
export function trustsForwardedAddress(trustProxy: TrustProxy): boolean {
  if (typeof trustProxy === 'boolean') return trustProxy;
  if (typeof trustProxy === 'number') return trustProxy > 0;
  return trustProxy.length > 0;
}

/** Fastify's `trustProxy`: a hop count as a function, as Fastify itself no longer takes one. */
export type FastifyTrustProxy = boolean | string[] | ((address: string, hop: number) => boolean);

/**
 * The option as Fastify reads it. Fastify 5.12 reads a bare number as trusting nothing (it cannot
 * tell the load balancer from a caller that connects directly), so a hop count is passed as the
 * function that trusts the first `hops` addresses from the socket on: the address the outermost of
 * them saw is the caller's, and whatever a caller wrote further left is not read.
 */
export function fastifyTrustProxy(trust: TrustProxy): FastifyTrustProxy {
  if (typeof trust === 'number') {
    const hops = trust;
    return (_address, hop) => hop < hops;
  }
  return typeof trust === 'boolean' ? trust : [...trust];
}

/**
 * Whether a socket address is one of the proxies the option names, or `undefined` when it names
 * none: with `true` or a hop count every sender would be one.
 */
export function namedProxies(trust: TrustProxy): ((address: string) => boolean) | undefined {
  if (typeof trust !== 'object' || trust.length === 0) return undefined;
  const named = compileAddresses([...trust]);
  return (address) => named(address, 0);
}

/**
 * The start-up warning when the option trusts every sender (logged once), saying what to set
 * instead; `undefined` otherwise. `variable` is the service's variable name.
 */
export function trustEverySenderWarning(trust: TrustProxy, variable: string): string | undefined {
  return trust === true
    ? `${variable}=true (trustProxy) trusts every sender's X-Forwarded-For: any caller can choose the address it is seen at (address lists, rate limits, evaluation contexts). Set ${variable} to the addresses or CIDR ranges of the load balancers in front (e.g. 10.0.0.0/8), or to the number of proxies in front (1 for one load balancer) when nothing reaches this server but through them`
    : undefined;
}
