import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance } from 'fastify';
import type { Logger } from '../config/options.js';
import { ProxyError } from '../errors.js';

const MINUTE_MS = 60_000;

/**
 * Gives every route registered afterwards in `app`'s encapsulation context one shared budget of
 * `perMinute` requests per client address (`request.ip`, so behind `trustProxy` the forwarded
 * address; IPv6 addresses by /64), kept in this process. A route's own `onRequest` hooks (the key
 * check) run first, so callers without a key are answered 401 and use no budget. Over budget:
 * 429 `RATE_LIMITED` with `Retry-After`. `perMinute` 0: no limit.
 */
export async function limitPerAddress(
  app: FastifyInstance,
  perMinute: number,
  behind: { readonly trustsForwarded: boolean; readonly log: Logger },
): Promise<void> {
  if (perMinute === 0) return;
  // Said once: behind a load balancer that `trustProxy` does not name, every browser has the
  // balancer's address, and so one budget for all of them.
  let warned = behind.trustsForwarded;
  await app.register(rateLimit, {
    onExceeded: (request) => {
      if (warned || request.headers['x-forwarded-for'] === undefined) return;
      warned = true;
      behind.log.warn(
        { address: request.ip, perMinute },
        'the report limit was reached by an address that forwards requests (X-Forwarded-For): behind a load balancer, set TRUST_PROXY to its address, or every caller shares its budget',
      );
    },
    // Every route of this context, with one store: the routes share the budget.
    global: true,
    max: perMinute,
    timeWindow: MINUTE_MS,
    errorResponseBuilder: (_request, context) =>
      new ProxyError('RATE_LIMITED', [
        `more than ${context.max} registrations and usage reports a minute from this address; retry in ${context.after}`,
      ]),
  });
}
