/**
 * @flags/serving: what flags-proxy and flags-server serve from. Each service brings its own feed
 * of snapshots (the proxy's upstream sync, the server's store) and its own token check (an
 * `AuthorizeHook`); this library turns them into the same answers, tags and streams.
 */

// Evaluation state per environment, and what is derived from each snapshot.
export type { Answer } from './answers.js';
export type { AuthorizeHook } from './authorize.js';
// Evaluation contexts from requests, and the enrichers that rewrite them.
export {
  type ContextEnricher,
  Enrichers,
} from './context/enrichers.js';
export {
  type ContextDefaults,
  contextFromBody,
  contextFromQuery,
  QueryFields,
} from './context/from-request.js';
export {
  clientErrors,
  ERROR_CONTENT_TYPE,
  type ErrorEntry,
  errorBody,
  ServingError,
  type ServingErrorCode,
  servingError,
  servingErrors,
} from './errors.js';
// What both services' HTTP servers are built with: who counts as one client, how long a request
// may take to arrive, how many connections one address may hold, which senders are trusted.
export { addressShare } from './http/address-share.js';
// Answer headers, conditional requests and the tag scheme, CORS.
export { type KeyedAnswerHeaders, keyedAnswerHeaders } from './http/cache-headers.js';
// The shared error type and the library's own catalogue entries.
export { answerClientError } from './http/client-errors.js';
export {
  ifNoneMatchHits,
  ListTag,
  notModified,
  type ResultTag,
  resultTag,
} from './http/conditional.js';
export {
  ConnectionCap,
  type ConnectionCapOptions,
  installConnectionCap,
} from './http/connection-cap.js';
export { fixedCorsHeaders, installCors } from './http/cors.js';
export { corsOptions, type ResolvedCors, resolveCors } from './http/cors-options.js';
// Server-Sent Events: frames, streams and the hub that fans changes out to them.
export {
  type EventFrame,
  EventStream,
  EventStreamHub,
  type EventStreamHubOptions,
  eventFrame,
  eventIdOf,
  type StreamHolder,
  type StreamRefusal,
} from './http/event-stream.js';
export { nonBlank, parseJson, readJsonBodies } from './http/json-body.js';
export { requestTimeoutOptions } from './http/request-timeout.js';
// Writing answers.
export type { RouteDocs } from './http/route-config.js';
export {
  errorResponses,
  FRONTEND_TAG,
  OFREP_TAG,
  OPERATIONAL_TAG,
  SERVER_SIDE_TAG,
  textResponse,
} from './http/route-docs.js';
export { AnswerWriter, type Rendered } from './http/serialize.js';
export { HandedOffResponse, installStreamFront } from './http/stream-front.js';
export {
  type FastifyTrustProxy,
  fastifyTrustProxy,
  namedProxies,
  type TrustProxy,
  trustEverySenderWarning,
} from './http/trusted-proxies.js';
export type { Logger } from './logger.js';
// The frontend API's evaluation routes (`/proxy`, `/api/frontend`, `/api/proxy`, their `/all`).
export { ALL_DISABLED_MESSAGE, type AllRouteOptions, allRoutes } from './routes/all.js';
export {
  API_FLAVOUR,
  type EvaluationFlavour,
  type EvaluationRouteOptions,
  frontendRoutes,
  PROXY_FLAVOUR,
  readEvaluationBody,
  renderBody,
  requestKey,
} from './routes/frontend.js';
export {
  CompiledState,
  type CompiledStateOptions,
  EnvironmentState,
  type EnvironmentStateOptions,
  type EvaluationCounter,
  type Fragment,
  type StateListener,
  type UsageCounting,
} from './state.js';
