import type { FastifyInstance } from 'fastify';
import parseSecureJson from 'secure-json-parse';
import { type ServingError, servingError } from '../errors.js';

function isJsonType(contentType: string): boolean {
  const type = contentType.split(';', 1)[0]?.trim().toLowerCase() ?? '';
  return (
    type === '' ||
    type === 'application/json' ||
    (type.startsWith('application/') && type.endsWith('+json'))
  );
}

const PARSE_OPTIONS = { protoAction: 'error', constructorAction: 'error' } as const;

/** JSON text to a value; `__proto__` and `constructor.prototype` keys are refused, like bad JSON (400). */
export function parseJson(text: string): unknown {
  try {
    return parseSecureJson(text, undefined, PARSE_OPTIONS);
  } catch (error) {
    throw servingError('INVALID_JSON', [error instanceof Error ? error.message : String(error)]);
  }
}

/** A body's text, or `undefined` when it is empty or blank: such a body is no body. */
export function nonBlank(text: string): string | undefined {
  return text === '' || text.trim() === '' ? undefined : text;
}

/**
 * Replaces the body parsers of `app`'s plugin scope with one for every content type: a body
 * without Content-Type is read as JSON, any other non-JSON type is a 415 (after readiness and
 * auth, which run in onRequest), an empty or blank body is `undefined`. With `'text'` the handler
 * gets the JSON text and parses it itself: the evaluation routes key their answer cache by it and
 * parse only when no answer is kept.
 */
export function readJsonBodies(app: FastifyInstance, as: 'value' | 'text'): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, function parseBody(request, body, done) {
    if (!isJsonType(request.headers['content-type'] ?? '')) {
      done(servingError('UNSUPPORTED_MEDIA_TYPE'), undefined);
      return;
    }
    const text = nonBlank(body as string);
    if (text === undefined) done(null, undefined);
    else if (as === 'text') done(null, text);
    else {
      try {
        done(null, parseJson(text));
      } catch (error) {
        done(error as ServingError, undefined);
      }
    }
  });
}
