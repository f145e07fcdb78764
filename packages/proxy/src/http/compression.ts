import type {} from '@flags/serving';
import type { FastifyInstance, FastifyReply, FastifyRequest, onSendHookHandler } from 'fastify';

/** Answers smaller than this are sent as they are (Unleash Proxy's threshold). */
const THRESHOLD_BYTES = 1024;
/**
 * Answers up to this size are compressed in one synchronous call. The plugin's default on a
 * 2-core machine is 8 KiB: above it each answer gets a compression stream of its own. Under load,
 * with 15 KB answers (200 flags), that cost ~0.8–1.4 ms of CPU per request and a peak RSS of
 * ~190 MB, against ~0.5 ms and ~107 MB in one call. Evaluation answers stay far below this size
 * (~75 KB at 1,000 flags).
 */
const SYNC_THRESHOLD_BYTES = 512 * 1024;

/**
 * `compression`: compresses answers over 1 KB in the encoding the caller prefers among br, gzip
 * and deflate (`@fastify/compress`; zstd is left out, so that every Node version answers alike).
 * Event streams are never compressed (the plugin skips `text/event-stream`, and the stream
 * routes write to the socket themselves), and request bodies are read as before, never
 * decompressed. The plugin is loaded only here: with compression off (the default) its modules
 * would take ~1 MB of heap for nothing.
 */
export async function installCompression(app: FastifyInstance): Promise<void> {
  const { default: fastifyCompress } = await import('@fastify/compress');
  const copies = new EncodedCopies();
  // Route hooks, as the plugin's own: this one runs before it, the others after.
  app.addHook('onRoute', (route) => {
    route.onSend = [...[route.onSend ?? []].flat(), copies.sendKept];
  });
  await app.register(fastifyCompress, {
    global: true,
    globalDecompression: false,
    threshold: THRESHOLD_BYTES,
    syncThreshold: SYNC_THRESHOLD_BYTES,
    encodings: ['br', 'gzip', 'deflate'],
  });
  // The plugin adds `accept-encoding` to `Vary` unless it finds it in that spelling (the
  // evaluation answers name it already, as `Accept-Encoding`), in an `onSend` hook it gives each
  // route; this one comes after it.
  app.addHook('onRoute', (route) => {
    route.onSend = [...[route.onSend ?? []].flat(), copies.keep, varyNamedOnce];
  });
}

/** An encoded copy of a kept body: what the plugin sent for one `Accept-Encoding`. */
interface EncodedCopy {
  readonly acceptEncoding: string;
  readonly encoding: string;
  readonly body: Buffer;
}

/** Encoded copies kept per body; a few `Accept-Encoding` spellings cover the browsers and SDKs. */
const COPIES_PER_BODY = 3;

/**
 * Encoded copies of the answers the answer cache keeps, so that a recurring answer is compressed
 * once per `Accept-Encoding` its callers send rather than on every request (~0.1 ms of CPU for a
 * 15 KB answer). The plugin still negotiates: a copy is what it chose and produced for that exact
 * header, looked up before it runs and sent as is (it leaves an answer that has a
 * `Content-Encoding` alone). Copies live as long as their body (a `WeakMap`), at most
 * `COPIES_PER_BODY` each (a caller cannot grow them with odd headers), each a fraction of the
 * body's size (~0.4–1.3 KB for 15 KB).
 */
class EncodedCopies {
  private readonly byBody = new WeakMap<Buffer, EncodedCopy[]>();
  /** The kept body a request is sending, from before the plugin compresses it to after. */
  private readonly sending = new WeakMap<FastifyRequest, Buffer>();

  /** Before the plugin: a kept body already encoded for this `Accept-Encoding` is sent so. */
  readonly sendKept: onSendHookHandler = async (request, reply, payload) => {
    const body = keptBody(request, reply, payload);
    if (body === undefined) return payload;
    const acceptEncoding = request.headers['accept-encoding'] ?? '';
    const copy = this.byBody.get(body)?.find((each) => each.acceptEncoding === acceptEncoding);
    if (copy === undefined) {
      this.sending.set(request, body);
      return payload;
    }
    // As the plugin: `Vary` names `Accept-Encoding` (once: `varyNamedOnce` comes after).
    const vary = reply.getHeader('vary');
    reply.header('vary', typeof vary === 'string' ? `${vary}, accept-encoding` : 'accept-encoding');
    reply.header('content-encoding', copy.encoding);
    reply.header('content-length', copy.body.length);
    return copy.body;
  };

  /** After the plugin: what it encoded a kept body to is kept for the next such request. */
  readonly keep: onSendHookHandler = async (request, reply, payload) => {
    const body = this.sending.get(request);
    if (body === undefined) return payload;
    this.sending.delete(request);
    const encoding = reply.getHeader('content-encoding');
    if (typeof encoding !== 'string' || !Buffer.isBuffer(payload) || payload === body)
      return payload;
    const copies = this.byBody.get(body) ?? [];
    if (copies.length < COPIES_PER_BODY) {
      const acceptEncoding = request.headers['accept-encoding'] ?? '';
      copies.push({ acceptEncoding, encoding, body: payload });
      this.byBody.set(body, copies);
    }
    return payload;
  };
}

/** The kept body an answer sends, when the plugin would consider encoding it. */
function keptBody(
  request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
): Buffer | undefined {
  if (!reply.sendsKeptBody || !Buffer.isBuffer(payload)) return undefined;
  if (request.headers['x-no-compression'] !== undefined) return undefined;
  return reply.statusCode === 200 ? payload : undefined;
}

const varyNamedOnce: onSendHookHandler = async (_request, reply, payload) => {
  const vary = reply.getHeader('vary');
  if (typeof vary === 'string') reply.header('vary', namedOnce(vary));
  return payload;
};

/** A `Vary` value with each header named once, in its first spelling. */
function namedOnce(vary: string): string {
  const seen = new Set<string>();
  return vary
    .split(',')
    .map((name) => name.trim())
    .filter((name) => {
      const key = name.toLowerCase();
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    })
    .join(', ');
}
