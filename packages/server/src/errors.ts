import { clientErrors, type ErrorEntry, errorBody, ServingError } from '@flags/serving';
import type { FastifyError, FastifyInstance } from 'fastify';
import { isDatabaseUnreachable } from './db/availability.js';

/**
 * The one catalogue of errors flags-server answers with. Routes throw `new ApiError(code, …)`;
 * the one error handler below writes `{ code, name, message, details: [{ message }] }`, `code` being
 * the key here.
 */
export const errorCatalogue = {
  BAD_DATA: { status: 400, name: 'BadDataError', message: 'The request is invalid.' },
  INVALID_JSON: {
    status: 400,
    name: 'BadDataError',
    message: 'The request body is not valid JSON.',
  },
  IMPORT_REJECTED: {
    status: 400,
    name: 'BadDataError',
    message: 'The import was rejected; nothing was changed.',
  },
  INVITE_INVALID: {
    status: 400,
    name: 'BadDataError',
    message: 'This invite link has expired or has been disabled.',
  },
  PASSWORD_LINK_INVALID: {
    status: 400,
    name: 'BadDataError',
    message: 'This password link is unknown, used or expired; ask an Admin for a new one.',
  },
  UNAUTHORIZED: {
    status: 401,
    name: 'AuthenticationRequired',
    message:
      'This endpoint requires an API token. Please add an authorization header to your request with a valid token.',
  },
  LOGIN_FAILED: {
    status: 401,
    name: 'PasswordMismatch',
    message:
      'The combination of password and username you provided is invalid. If you have forgotten your password, get in touch with your instance administrator.',
  },
  SSO_FAILED: {
    status: 401,
    name: 'SingleSignOnError',
    message:
      'The sign-in with the identity provider could not be completed; start it again from the login page.',
  },
  OLD_PASSWORD_WRONG: {
    status: 401,
    name: 'PasswordMismatch',
    message: 'The current password is not right; nothing was changed.',
  },
  FORBIDDEN: {
    status: 403,
    name: 'ForbiddenError',
    message: 'This token is not allowed to use this endpoint.',
  },
  ROLE_FORBIDDEN: {
    status: 403,
    name: 'ForbiddenError',
    message: 'Your role does not allow this.',
  },
  CROSS_ORIGIN: {
    status: 403,
    name: 'ForbiddenError',
    message:
      'A request signed in by cookie that comes from another site is refused; use the server’s own pages, or an API token.',
  },
  SSO_NOT_ALLOWED: {
    status: 403,
    name: 'SingleSignOnError',
    message:
      'The identity provider signed you in, but this server does not let you in; ask an Admin.',
  },
  PASSWORD_LOGINS_DISABLED: {
    status: 403,
    name: 'ForbiddenError',
    message: 'Password logins are turned off on this server: sign in with single sign-on.',
  },
  PATS_NEED_SESSION: {
    status: 403,
    name: 'ForbiddenError',
    message:
      'Personal access tokens are listed, created and deleted from a signed-in session, not with a personal access token.',
  },
  PATS_NEED_USER: {
    status: 403,
    name: 'ForbiddenError',
    message: 'PATs require an authenticated user: sign in, or use a personal access token.',
  },
  NOT_FOUND: {
    status: 404,
    name: 'NotFoundError',
    message: 'The requested resource was not found.',
  },
  OIDC_NOT_ENABLED: {
    status: 404,
    name: 'NotFoundError',
    message: 'Single sign-on with OpenID Connect is not turned on on this server.',
  },
  NAME_EXISTS: { status: 409, name: 'NameExistsError', message: 'The name is already in use.' },
  USER_EXISTS: {
    status: 409,
    name: 'NameExistsError',
    message: 'A user with this email already exists.',
  },
  USERNAME_EXISTS: {
    status: 409,
    name: 'NameExistsError',
    message: 'A user with this username already exists.',
  },
  FEATURE_HAS_CHILDREN: {
    status: 403,
    name: 'InvalidOperationError',
    message: 'Other features depend on this feature.',
  },
  INVALID_OPERATION: {
    status: 403,
    name: 'InvalidOperationError',
    message: 'This operation is not allowed on this feature.',
  },
  IN_USE: {
    status: 409,
    name: 'ConflictError',
    message: 'This is still in use; remove its uses first.',
  },
  OPERATION_DENIED: {
    status: 403,
    name: 'OperationDeniedError',
    message: 'This operation is not allowed on this route.',
  },
  PAT_LIMIT: {
    status: 403,
    name: 'OperationDeniedError',
    message: 'This user has as many personal access tokens as allowed (10); delete one first.',
  },
  LAST_ADMIN: {
    status: 409,
    name: 'ConflictError',
    message: 'This change would leave no Admin: make another user Admin first.',
  },
  PRECONDITION_FAILED: {
    status: 412,
    name: 'PreconditionFailedError',
    message: 'The feature changed since it was read (If-Match names another version).',
  },
  BODY_TOO_LARGE: {
    status: 413,
    name: 'ContentTooLargeError',
    message: 'The request body is larger than this endpoint accepts.',
  },
  UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    name: 'ContentTypeError',
    message: 'The content type is not supported; send application/json.',
  },
  RATE_LIMITED: {
    status: 429,
    name: 'RateLimitError',
    message: 'Too many requests from this address; try again in a minute.',
  },
  LOGIN_LIMITED: {
    status: 429,
    name: 'RateLimitError',
    message:
      'Too many failed logins for this user from this address: wait the seconds `Retry-After` gives, then try again (logins from other addresses are not held up). If you have forgotten your password, get in touch with your instance administrator.',
  },
  STREAMS_FULL: {
    status: 429,
    name: 'RateLimitError',
    message:
      'This server holds as many streams as it allows, in all or from this address or token; poll /api/client/features or /api/client/delta instead.',
  },
  INTERNAL: { status: 500, name: 'InternalError', message: 'Something went wrong on the server.' },
  OIDC_PROVIDER_UNAVAILABLE: {
    status: 502,
    name: 'BadGatewayError',
    message:
      'The identity provider could not be reached or answered what this server cannot use; try again, or tell an Admin.',
  },
  PASSWORD_HASHING_BUSY: {
    status: 503,
    name: 'ServiceUnavailableError',
    message: 'Too many password checks are waiting on this server; retry in a few seconds.',
  },
  DATABASE_UNAVAILABLE: {
    status: 503,
    name: 'ServiceUnavailableError',
    message:
      'The database is unreachable; nothing was changed. Retry when it is back (the client API keeps serving the last configuration).',
  },
  NOT_READY: {
    status: 503,
    name: 'ServiceUnavailableError',
    message:
      'flags-server has not loaded its configuration from the database yet; it keeps retrying.',
  },
  SHUTTING_DOWN: {
    status: 503,
    name: 'ServiceUnavailableError',
    message: 'The server is shutting down: send the request to another instance, or retry.',
  },
  ...clientErrors,
} as const satisfies Record<string, ErrorEntry>;

export type ErrorCode = keyof typeof errorCatalogue;

/** An error of flags-server's catalogue: the shared error type with this server's codes. */
export class ApiError extends ServingError {
  declare readonly code: ErrorCode;
  constructor(code: ErrorCode, message?: string, details?: readonly string[]) {
    const entry = errorCatalogue[code];
    super(code, message === undefined ? entry : { ...entry, message }, details);
  }
}

export { errorBody };

/** Maps Fastify's own errors (validation, body parsing, limits) into the catalogue. */
function fromFastifyError(error: FastifyError): ApiError | undefined {
  if (isDatabaseUnreachable(error)) return new ApiError('DATABASE_UNAVAILABLE');
  if (error.validation) {
    const details = error.validation.map((issue) => {
      const where = issue.instancePath
        ? `${error.validationContext ?? 'body'}${issue.instancePath}`
        : (error.validationContext ?? 'body');
      const extra =
        issue.keyword === 'additionalProperties'
          ? ` (${String((issue.params as { additionalProperty?: string }).additionalProperty)})`
          : '';
      return `${where} ${issue.message ?? 'is invalid'}${extra}`;
    });
    return new ApiError('BAD_DATA', `Request validation failed: ${details[0]}`, details);
  }
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError('BODY_TOO_LARGE');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError('UNSUPPORTED_MEDIA_TYPE');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ApiError('INVALID_JSON', 'The request body is empty.');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ApiError('BAD_DATA', 'The Content-Length header does not match the body.');
  }
  // PostgreSQL data exceptions (class 22: NUL bytes, out-of-range dates and numbers) come from
  // values the client sent; integrity violations (class 23) from names that clash.
  const sqlState =
    typeof error.code === 'string' && /^2[23][0-9A-Z]{3}$/.test(error.code)
      ? error.code
      : undefined;
  if (sqlState?.startsWith('22')) {
    return new ApiError('BAD_DATA', 'The request contains a value the database cannot store.');
  }
  if (sqlState === '23505') return new ApiError('NAME_EXISTS');
  if (sqlState?.startsWith('23')) {
    return new ApiError('BAD_DATA', 'The request refers to something that does not exist.');
  }
  if (error instanceof SyntaxError || error.statusCode === 400) {
    return new ApiError('INVALID_JSON', `The request body is not valid JSON: ${error.message}`);
  }
  if (error.statusCode === 413) return new ApiError('BODY_TOO_LARGE');
  if (error.statusCode === 415) return new ApiError('UNSUPPORTED_MEDIA_TYPE');
  return undefined;
}

/** The catalogue entry of each 4xx the frontend API's routes (the serving library's) throw, by status. */
const FROM_SERVING_STATUS: Readonly<Record<number, ErrorCode>> = {
  400: 'BAD_DATA',
  404: 'NOT_FOUND',
  413: 'BODY_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
};

/**
 * A serving-library error as this server's (same status, name, message and details as flags-proxy
 * answers for the same request; the names of these entries are the same in both catalogues).
 */
function fromServingError(error: ServingError): ApiError {
  const code = error.code === 'INVALID_JSON' ? 'INVALID_JSON' : FROM_SERVING_STATUS[error.status];
  return code === undefined
    ? new ApiError('INTERNAL')
    : new ApiError(code, error.message, error.details);
}

/**
 * 503s of a database outage: the outage is logged once when it begins and once when it ends
 * (`DatabaseAvailability`), not once per request refused meanwhile.
 */
const LOGGED_ONCE_ELSEWHERE: ReadonlySet<ErrorCode> = new Set([
  'DATABASE_UNAVAILABLE',
  'NOT_READY',
]);

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const apiError =
      error instanceof ApiError
        ? error
        : error instanceof ServingError
          ? fromServingError(error)
          : (fromFastifyError(error) ?? new ApiError('INTERNAL'));
    if (apiError.status >= 500 && !LOGGED_ONCE_ELSEWHERE.has(apiError.code)) {
      request.log.error({ err: error }, 'request failed');
    }
    void reply.status(apiError.status).type('application/json').send(errorBody(apiError));
  });
  app.setNotFoundHandler((request, reply) => {
    const error = new ApiError(
      'NOT_FOUND',
      `The path you were looking for (${request.url.split('?')[0]}) is not available.`,
    );
    void reply.status(404).type('application/json').send(errorBody(error));
  });
}
