/**
 * @flags/serving: what flags-proxy and flags-server serve from. Each service brings its own feed
 * of snapshots (the proxy's upstream sync, the server's store) and its own token check (an
 * `AuthorizeHook`); this library turns them into the same answers, tags and streams.
 */

// Exports sorted by module (Biome keeps them so): the state per environment (`state.ts`,
// `answers.ts`), context readers (`context/`), the errors (`errors.ts`, `http/client-errors.ts`),
// the HTTP pieces both servers are built with (`http/`) and the frontend routes (`routes/`).
export type { Answer } from './answers.js';
export type { AuthorizeHook } from './authorize.js';
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
export { addressShare } from './http/address-share.js';
export { type KeyedAnswerHeaders, keyedAnswerHeaders } from './http/cache-headers.js';
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
export type { RouteDocs } from './http/route-config.js';
export {
  errorResponses,
  FRONTEND_TAG,
  OFREP_TAG,
  OPERATIONAL_TAG,
  SERVER_SIDE_TAG,
  textResponse,
} from './http/route-docs.js';
export {
  AnswerWriter,
  PREFIX as ANSWER_PREFIX,
  type Rendered,
  SUFFIX as ANSWER_SUFFIX,
  type WrittenFragments,
} from './http/serialize.js';
export { HandedOffResponse, installStreamFront } from './http/stream-front.js';
export {
  type FastifyTrustProxy,
  fastifyTrustProxy,
  namedProxies,
  type TrustProxy,
  trustEverySenderWarning,
  trustsForwardedAddress,
} from './http/trusted-proxies.js';
export type { Logger } from './logger.js';
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
