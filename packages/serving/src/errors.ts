import type { ErrorBody } from '@flags/schemas';

/** One entry of an error catalogue: the status, the error's name and its message. */
export interface ErrorEntry {
  readonly status: number;
  readonly name: string;
  readonly message: string;
}

/**
 * What a connection gets when Node's HTTP parser gives up on it before a request exists
 * (`answerClientError`), in both services' catalogues.
 */
export const clientErrors = {
  MALFORMED_REQUEST: {
    status: 400,
    name: 'BadRequestError',
    message: 'The request is not valid HTTP.',
  },
  REQUEST_TIMEOUT: {
    status: 408,
    name: 'RequestTimeoutError',
    message: 'The request did not arrive whole in time (`requestTimeoutMs`).',
  },
  HEADERS_TOO_LARGE: {
    status: 431,
    name: 'HeadersTooLargeError',
    message: 'The request headers are larger than accepted.',
  },
} as const satisfies Record<string, ErrorEntry>;

/**
 * The errors the serving library's own routes and readers throw. Each service's catalogue holds
 * these entries under the same codes beside its own (flags-proxy spreads them into its own).
 */
export const servingErrors = {
  BAD_CONTEXT: { status: 400, name: 'BadDataError', message: 'The evaluation context is invalid.' },
  BAD_BODY: { status: 400, name: 'BadDataError', message: 'The request body is invalid.' },
  INVALID_JSON: {
    status: 400,
    name: 'BadDataError',
    message: 'The request body is not valid JSON.',
  },
  FEATURE_NOT_FOUND: {
    status: 404,
    name: 'NotFoundError',
    message: 'No enabled feature of that name for this token.',
  },
  UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    name: 'ContentTypeError',
    message: 'The content type is not supported; send application/json.',
  },
  ENRICHER_FAILED: {
    status: 500,
    name: 'ContextEnricherError',
    message: 'A custom context enricher of this proxy failed.',
  },
  ...clientErrors,
} as const satisfies Record<string, ErrorEntry>;

export type ServingErrorCode = keyof typeof servingErrors;

/**
 * An error answered with the JSON error shape `{ code, name, message, details: [{ message }] }`: the
 * shared type of both services' catalogued errors. The serving library throws it with its own
 * codes (`servingError`); a service may extend it with a catalogue of its own.
 */
export class ServingError extends Error {
  readonly status: number;
  readonly details: readonly string[];
  constructor(
    readonly code: string,
    entry: ErrorEntry,
    details?: readonly string[],
  ) {
    super(entry.message);
    this.name = entry.name;
    this.status = entry.status;
    this.details = details ?? [entry.message];
  }
}

/** The serving library's error of `code`, with `details` (default: the entry's message). */
export function servingError(code: ServingErrorCode, details?: readonly string[]): ServingError {
  return new ServingError(code, servingErrors[code], details);
}

/** The JSON body of an error answer; `code` is the catalogue's key, the same field in every service. */
export function errorBody(error: ServingError): ErrorBody {
  return {
    code: error.code,
    name: error.name,
    message: error.message,
    details: error.details.map((message) => ({ message })),
  };
}

/** The type of every JSON error answer. */
export const ERROR_CONTENT_TYPE = 'application/json; charset=utf-8';
