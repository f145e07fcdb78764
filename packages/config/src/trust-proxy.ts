/**
 * Whether `trustProxy` lets a forwarded address be the request address: then the request address
 * is the caller's, and a `remoteAddress` the caller sends is not needed (nor trusted) by default.
 */
export function trustsForwardedAddress(trustProxy: boolean | number | readonly string[]): boolean {
  if (typeof trustProxy === 'boolean') return trustProxy;
  if (typeof trustProxy === 'number') return trustProxy > 0;
  return trustProxy.length > 0;
}
