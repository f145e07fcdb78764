import {
  ERROR_CONTENT_TYPE,
  type ErrorEntry,
  errorBody,
  type Logger,
  ServingError,
  servingErrors,
} from '@flags/serving';
import type { FastifyError, FastifyInstance } from 'fastify';

/**
 * The one catalogue of JSON errors flags-proxy answers with. Routes throw `new ProxyError(code)`;
 * the one handler below writes `{ code, name, message, details: [{ message }] }`, `code` being the
 * key here. The plain-text answers fixed by the wire contract (503 `Not Ready`, 401 `Unauthorized`
 * on `/proxy` and OFREP for any key problem, the 501 of `/proxy/all`) are written by their hooks
 * and routes directly, and carry no code.
 */
export const errorCatalogue = {
  ...servingErrors,
  HOST_REQUIRED: {
    status: 400,
    name: 'BadRequestError',
    message: 'A redirect to HTTPS needs a Host header naming this server.',
  },
  NO_TOKEN: {
    status: 401,
    name: 'AuthenticationRequired',
    message: 'This endpoint requires an API token in the Authorization header.',
  },
  TOKEN_NOT_CHECKED: {
    status: 401,
    name: 'AuthenticationRequired',
    message: 'The token could not be validated with the upstream yet; try again shortly.',
  },
  INVALID_EVENT_CREDENTIAL: {
    status: 401,
    name: 'AuthenticationRequired',
    message: 'The event-stream credential is missing, invalid or expired.',
  },
  INVALID_TOKEN: {
    status: 403,
    name: 'InvalidTokenError',
    message: 'The token is not valid at this proxy.',
  },
  WRONG_TOKEN_TYPE: {
    status: 403,
    name: 'InvalidTokenError',
    message:
      'This token type cannot be used here: frontend tokens and client keys on the frontend API, client tokens on the client API.',
  },
  ADDRESS_NOT_ALLOWED: {
    status: 403,
    name: 'ForbiddenError',
    message: 'This proxy does not answer requests from this address (`allowList`, `denyList`).',
  },
  ENVIRONMENT_NOT_SERVED: {
    status: 403,
    name: 'InvalidTokenError',
    message: 'The token used does not have access to this proxy: its environment is not synced.',
  },
  NOT_FOUND: { status: 404, name: 'NotFoundError', message: 'There is nothing at this path.' },
  BODY_TOO_LARGE: {
    status: 413,
    name: 'ContentTooLargeError',
    message: 'The request body is larger than this proxy accepts.',
  },
  RATE_LIMITED: {
    status: 429,
    name: 'RateLimitError',
    message: 'Too many registrations and usage reports from this address.',
  },
  TOO_MANY_STREAMS: {
    status: 429,
    name: 'RateLimitError',
    message:
      'This proxy holds as many event streams as it accepts, in all or from this address or key (`streamingMaxConnections…`, `ofrepEventStreamsMax…`); poll or try again later.',
  },
  ENVIRONMENT_NOT_READY: {
    status: 503,
    name: 'NotReadyError',
    message: 'The token’s environment has not been synced from the upstream yet.',
  },
  INTERNAL: { status: 500, name: 'InternalError', message: 'Something went wrong in the proxy.' },
} as const satisfies Record<string, ErrorEntry>;

export type ErrorCode = keyof typeof errorCatalogue;

/** An error of flags-proxy's catalogue (the serving library's entries included). */
export class ProxyError extends ServingError {
  declare readonly code: ErrorCode;
  constructor(code: ErrorCode, details?: readonly string[]) {
    super(code, errorCatalogue[code], details);
  }
}

export { ERROR_CONTENT_TYPE, errorBody };

/** Maps Fastify's own errors (body parsing, limits) into the catalogue. */
function fromFastifyError(error: FastifyError): ProxyError | undefined {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ProxyError('BODY_TOO_LARGE');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ProxyError('UNSUPPORTED_MEDIA_TYPE');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ProxyError('INVALID_JSON', [error.message]);
  }
  if (error instanceof SyntaxError) return new ProxyError('INVALID_JSON', [error.message]);
  if (error.validation) return new ProxyError('BAD_BODY', [error.message]);
  if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
    return new ProxyError('BAD_BODY', [error.message]);
  }
  return undefined;
}

/**
 * What a failure answering a request is answered with: itself if it is a `ServingError` (the serving library's or the proxy's), the
 * catalogue's entry for Fastify's own errors, else `INTERNAL`, which is logged.
 */
export function answeredError(raw: unknown, log: Logger): ServingError {
  const error =
    raw instanceof ServingError
      ? raw
      : ((raw instanceof Error ? fromFastifyError(raw as FastifyError) : undefined) ??
        new ProxyError('INTERNAL'));
  if (error.code === 'INTERNAL')
    log.error({ err: raw }, 'unexpected error while answering a request');
  return error;
}

export function installErrorHandler(app: FastifyInstance, log: Logger): void {
  app.setErrorHandler((raw: FastifyError, _request, reply) => {
    const error = answeredError(raw, log);
    void reply.code(error.status).type(ERROR_CONTENT_TYPE).send(errorBody(error));
  });
  app.setNotFoundHandler((_request, reply) => {
    void reply
      .code(404)
      .type(ERROR_CONTENT_TYPE)
      .send(errorBody(new ProxyError('NOT_FOUND')));
  });
}
