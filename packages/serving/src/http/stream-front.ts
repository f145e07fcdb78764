import { IncomingMessage, type Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * A response whose socket the event-stream hub may take over once the stream's head is written
 * (see `EventStreamHub.open`): made by the stream front below, never by Node's HTTP server.
 */
export class HandedOffResponse extends ServerResponse {}

/** A request head larger than this goes to Node's HTTP server (which applies its own limit). */
const MAX_HEAD_BYTES = 8 * 1024;
/** A header name (RFC 9110 token), lower-cased. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;
/** A header value: tab, visible characters and obs-text (read as latin1); no control characters. */
const FIELD_VALUE = /^[\t\u0020-\u007e\u0080-\u00ff]*$/;
/** The optional whitespace around a header value. */
const OUTER_WHITESPACE = /^[ \t]+|[ \t]+$/g;
/** Headers that would make the request more than a bodiless GET: Node's server handles those. */
const NOT_PLAIN = new Set(['content-length', 'transfer-encoding', 'upgrade', 'expect']);

interface PlainGet {
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly rawHeaders: string[];
}

/** The path of a request target with `//` collapsed and trailing `/` dropped, as the router does. */
function routePath(url: string): string {
  const query = url.indexOf('?');
  const path = (query < 0 ? url : url.slice(0, query)).replace(/\/{2,}/g, '/');
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}

/**
 * The request in `chunk` if it is exactly one complete, plain `GET` of one of `paths`: HTTP/1.1,
 * a Host header, no body, no repeated header, nothing after the head. Anything else (a partial
 * head, a body, a pipelined request, an odd byte) is `undefined`, and Node's own parser gets it.
 */
function plainGet(chunk: Buffer, paths: ReadonlySet<string>): PlainGet | undefined {
  const end = chunk.indexOf('\r\n\r\n');
  if (end < 0 || end > MAX_HEAD_BYTES || end + 4 !== chunk.length) return undefined;
  const lines = chunk.toString('latin1', 0, end).split('\r\n');
  const requestLine = /^GET (\/[\u0021-\u007e]*) HTTP\/1\.1$/.exec(lines[0] as string);
  if (requestLine === null) return undefined;
  const url = requestLine[1] as string;
  if (!paths.has(routePath(url))) return undefined;
  const headers: Record<string, string> = {};
  const rawHeaders: string[] = [];
  for (let index = 1; index < lines.length; index++) {
    const line = lines[index] as string;
    const colon = line.indexOf(':');
    if (colon <= 0) return undefined;
    const rawName = line.slice(0, colon);
    const name = rawName.toLowerCase();
    // Only spaces and tabs around a value are not part of it (`trim` would take more).
    const value = line.slice(colon + 1).replace(OUTER_WHITESPACE, '');
    if (
      !HEADER_NAME.test(name) ||
      !FIELD_VALUE.test(value) ||
      Object.hasOwn(headers, name) ||
      NOT_PLAIN.has(name) ||
      name === '__proto__'
    )
      return undefined;
    headers[name] = value;
    rawHeaders.push(rawName, value);
  }
  return headers.host === undefined ? undefined : { url, headers, rawHeaders };
}

/** Ignores errors of a socket the front holds (a reset before the request): it just closes. */
function ignoreError(): void {}

/** Closes a new connection that sent nothing in time, or ended before sending anything. */
function closeSilent(this: Socket): void {
  this.destroy();
}

/**
 * Serves the event-stream routes below Node's HTTP server, so that an idle stream costs its socket
 * and little else.
 *
 * Node's server keeps a parser, a request, a response and their listeners for every open response,
 * about twice what the socket itself costs, for as long as a stream lasts. So the first request of
 * each new connection is looked at here: when it is a plain `GET` of one of `paths`, the front
 * builds the request and response over the socket itself and gives them to the app (the
 * server's `request` event), so Fastify answers it with every hook (readiness, key, CORS,
 * metrics) as always; when the answer is a stream, the hub takes the bare socket over and the
 * rest is garbage. Every other connection goes to Node's server untouched, data included.
 *
 * Only the first request of a connection can be served here; a stream opened on a kept-alive
 * connection is served by Node's server as before, at its memory cost. On a TLS server the first
 * bytes are a handshake, never a `GET`, so every connection goes to Node's server.
 */
export function installStreamFront(server: Server, paths: readonly string[]): void {
  const pathSet = new Set(paths.map(routePath));
  const httpListeners = server.listeners('connection') as ((socket: Socket) => void)[];
  server.removeAllListeners('connection');

  const handOver = (socket: Socket, chunk: Buffer) => {
    socket.removeListener('error', ignoreError);
    socket.unshift(chunk);
    for (const listener of httpListeners) listener.call(server, socket);
    socket.resume();
  };

  const serve = (socket: Socket, request: PlainGet) => {
    const incoming = new IncomingMessage(socket);
    incoming.method = 'GET';
    incoming.url = request.url;
    incoming.httpVersionMajor = 1;
    incoming.httpVersionMinor = 1;
    incoming.httpVersion = '1.1';
    incoming.headers = request.headers;
    incoming.rawHeaders = request.rawHeaders;
    incoming.complete = true;
    incoming.push(null);
    const response = new HandedOffResponse(incoming);
    // Anything but a stream ends the connection: the next request goes to a fresh one.
    response.shouldKeepAlive = false;
    response.assignSocket(socket);
    response.on('finish', () => {
      response.detachSocket(socket);
      // As Node's server ends a `Connection: close` answer: closed once written.
      socket.destroySoon();
    });
    server.emit('request', incoming, response);
  };

  server.on('connection', (socket: Socket) => {
    socket.on('error', ignoreError);
    // A connection that sends nothing is closed when Node's server would close it.
    socket.setTimeout(server.headersTimeout);
    socket.on('timeout', closeSilent);
    socket.on('end', closeSilent);
    socket.once('data', (chunk: Buffer) => {
      socket.pause();
      socket.setTimeout(0);
      socket.removeListener('timeout', closeSilent);
      socket.removeListener('end', closeSilent);
      const request = plainGet(chunk, pathSet);
      if (request === undefined) handOver(socket, chunk);
      else serve(socket, request);
    });
  });
}
