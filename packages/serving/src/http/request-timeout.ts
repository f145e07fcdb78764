import type { ServerOptions } from 'node:http';

/** Node's time to receive a request's headers, ms (its default; kept when it is shorter). */
const NODE_HEADERS_TIMEOUT_MS = 60_000;
/** Node's interval between its checks of requests still being received, ms (its default). */
const NODE_CHECK_INTERVAL_MS = 30_000;

/**
 * Fastify options that bound the time to receive a whole request, headers and body, to
 * `requestTimeoutMs` (0: no bound but Node's 60 s on headers). Node answers a slower one 408 and
 * closes its connection; it checks every quarter of the timeout, so a request is cut within 1.25
 * times it. Only requests still arriving are checked: an answer, an event stream above all, may
 * take as long as it likes.
 */
export function requestTimeoutOptions(requestTimeoutMs: number): {
  requestTimeout: number;
  http: ServerOptions;
} {
  if (requestTimeoutMs === 0) return { requestTimeout: 0, http: {} };
  return {
    requestTimeout: requestTimeoutMs,
    http: {
      requestTimeout: requestTimeoutMs,
      // Never longer than the whole request (the stream front closes silent connections after it).
      headersTimeout: Math.min(NODE_HEADERS_TIMEOUT_MS, requestTimeoutMs),
      connectionsCheckingInterval: Math.min(
        NODE_CHECK_INTERVAL_MS,
        Math.ceil(requestTimeoutMs / 4),
      ),
    },
  };
}
