import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { clientErrors, ERROR_CONTENT_TYPE, errorBody, ServingError } from '../errors.js';

/** The catalogue entry of each error Node's HTTP parser reports (`clientError`), by its code. */
const BY_NODE_CODE: Readonly<Record<string, keyof typeof clientErrors>> = {
  ERR_HTTP_REQUEST_TIMEOUT: 'REQUEST_TIMEOUT',
  HPE_HEADER_OVERFLOW: 'HEADERS_TOO_LARGE',
};

/**
 * Fastify's `clientErrorHandler`: a connection Node's HTTP server gives up on before a request
 * exists (`requestTimeoutMs` passed, headers too large, not HTTP) gets the JSON error shape every
 * other error has, then is closed. Fastify's own handler writes another shape.
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  // Reset or already gone: there is no one to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const code = BY_NODE_CODE[error.code ?? ''] ?? 'MALFORMED_REQUEST';
  const entry = clientErrors[code];
  if (socket.writable) {
    const body = JSON.stringify(errorBody(new ServingError(code, entry)));
    socket.write(
      `HTTP/1.1 ${entry.status} ${STATUS_CODES[entry.status]}\r\nConnection: close\r\n` +
        `Content-Type: ${ERROR_CONTENT_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}
