/**
 * The building blocks flags-server reuses, exported from the package beside the proxy itself: its
 * `/api/frontend` routes are these routes (`frontendRoutes`, `allRoutes` in the `API_FLAVOUR`),
 * fed by its own snapshots (one `ProxyState` per environment) and admitted by its own token check
 * (an `AuthorizeHook` that sets `request.served`), with the proxy's answer writer, cache headers,
 * CORS options and errors. So both services answer the frontend API with one engine, one wire
 * format and one ETag rule (`ifNoneMatchHits`, which flags-server's client API follows too); and
 * the same bounds on connections (`requestTimeoutOptions`, `ConnectionCap`, the `trustProxy`
 * readings).
 */
export type { AuthorizeHook } from './auth/access.js';
export { type ResolvedCors, resolveCors, trustsForwardedAddress } from './config/load.js';
export { corsOptions } from './config/options.js';
export { Enrichers } from './context/enrichers.js';
export { ProxyError } from './errors.js';
export { keyedAnswerHeaders } from './http/cache-headers.js';
export { ifNoneMatchHits } from './http/conditional.js';
export { ConnectionCap, installConnectionCap } from './http/connection-cap.js';
export { installCors } from './http/cors.js';
export {
  type EventFrame,
  EventStream,
  EventStreamHub,
  eventFrame,
  type StreamRefusal,
} from './http/event-stream.js';
export { requestTimeoutOptions } from './http/request-timeout.js';
export { AnswerWriter } from './http/serialize.js';
export {
  fastifyTrustProxy,
  namedProxies,
  type TrustProxy,
  trustEverySenderWarning,
} from './http/trusted-proxies.js';
export { allRoutes } from './routes/all.js';
export { API_FLAVOUR, frontendRoutes } from './routes/frontend.js';
export { eventIdOf } from './streaming/change-log.js';
