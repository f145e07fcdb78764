import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance } from 'fastify';
import { ProxyError } from '../errors.js';

const MINUTE_MS = 60_000;

/**
 * Gives every route registered afterwards in `app`'s encapsulation context one shared budget of
 * `perMinute` requests per client address (`request.ip`, so behind `trustProxy` the forwarded
 * address; IPv6 addresses by /64), kept in this process. A route's own `onRequest` hooks (the key
 * check) run first, so callers without a key are answered 401 and use no budget. Over budget:
 * 429 `RATE_LIMITED` with `Retry-After`. `perMinute` 0: no limit.
 */
export async function limitPerAddress(app: FastifyInstance, perMinute: number): Promise<void> {
  if (perMinute === 0) return;
  await app.register(rateLimit, {
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
