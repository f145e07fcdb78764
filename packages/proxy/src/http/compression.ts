import type { IncomingHttpHeaders } from 'node:http';
import { brotliCompressSync, constants, deflateSync, gzipSync } from 'node:zlib';
import { Negotiator } from '@fastify/accept-negotiator';
import type { AnswerWriter } from '@flags/serving';
import type { FastifyInstance, onSendHookHandler } from 'fastify';
import { JoinedGzip } from './joined-gzip.js';

/** Answers smaller than this are sent as they are (Unleash Proxy's threshold). */
export const THRESHOLD_BYTES = 1024;
/**
 * Answers up to this size are compressed in one synchronous call. The plugin's default on a
 * 2-core machine is 8 KiB: above it each answer gets a compression stream of its own. Under load,
 * with 15 KB answers (200 flags), that cost ~0.8–1.4 ms of CPU per request and a peak RSS of
 * ~190 MB, against ~0.5 ms and ~107 MB in one call. Evaluation answers stay far below this size
 * (~75 KB at 1,000 flags).
 */
const SYNC_THRESHOLD_BYTES = 512 * 1024;

/** The encodings offered, most preferred first (zstd is left out: every Node version answers alike). */
const ENCODINGS = ['br', 'gzip', 'deflate'] as const;
export type Encoding = (typeof ENCODINGS)[number];
/**
 * The same, for an answer rendered for one request: gzip first, as it is joined from pieces
 * compressed once (`JoinedGzip`) instead of compressed whole.
 */
const RENDERED_ENCODINGS: readonly Encoding[] = ['gzip', 'br', 'deflate'];

/**
 * How hard an answer is compressed. An answer compressed for one request is compressed at the
 * fastest settings: on a 12–15 KB answer of 200 flags, in a tight loop, brotli quality 1 takes
 * ~12 µs for ~730 bytes (~25 µs under load, when the caches hold other work), quality 0 as long
 * for ~890 bytes, quality 4 (the plugin's default) ~35 µs for ~590, zlib level 1 ~15 µs for ~740
 * (more than brotli under load) and level 6 (zlib's default) ~32 µs for ~640. Smaller windows,
 * memory levels or other zlib strategies change neither time nor size at these levels. An answer
 * the answer cache keeps is compressed once per `Accept-Encoding` and sent many times, so it gets
 * the smaller encoding (~520 and ~640 bytes) for ~45 µs (brotli, `fittedWindow`) once.
 */
export const LEVELS = {
  /** Answers compressed for one request (and every answer the plugin compresses). */
  dynamic: { brotliQuality: 1, zlibLevel: 1 },
  /** Kept answers' encoded copies. */
  kept: { brotliQuality: 5, zlibLevel: 6 },
} as const;

type Compressor = (body: Buffer) => Buffer;

/** Node's `Buffer.allocUnsafe` takes sizes under half its pool (`Buffer.poolSize`, 8 KiB) from it. */
const MAX_POOLED_CHUNK_BYTES = 4095;

/**
 * The size of the output chunks zlib writes `body` into: an eighth of it (JSON answers shrink to
 * ~5–7 %), under 4 KiB. With zlib's default, 16 KiB, every call allocated a Buffer of its own that
 * the ~1 KB answer then held; under 4 KiB, Node slices it from its shared pool. A larger output
 * takes more chunks, joined as zlib joins them.
 */
function chunkSize(body: Buffer): number {
  return Math.min(MAX_POOLED_CHUNK_BYTES, Math.max(constants.Z_MIN_CHUNK, body.length >> 3));
}

/**
 * The smallest brotli window (`BROTLI_PARAM_LGWIN`) that holds `body`: at quality 5 the encoder
 * allocates and clears a ring buffer and hash tables sized by the window, 4 MiB by default. On a
 * 15 KB answer a fitted window took ~45 µs instead of ~130 µs (~510 µs → ~140 µs at 60 KB), for
 * 1–2 bytes more; with `flags-proxy`'s allocator settings each of those buffers was memory mapped
 * anew. Quality 1 compresses without a ring buffer, so the window costs it nothing.
 */
function fittedWindow(body: Buffer): number {
  const bits = Math.ceil(Math.log2(body.length + BROTLI_WINDOW_GAP));
  return Math.min(
    constants.BROTLI_MAX_WINDOW_BITS,
    Math.max(constants.BROTLI_MIN_WINDOW_BITS, bits),
  );
}

/** Bytes a brotli window of 2^n holds fewer than 2^n (RFC 7932 §9.1). */
const BROTLI_WINDOW_GAP = 16;

function compressors(
  levels: { readonly brotliQuality: number; readonly zlibLevel: number },
  fitWindow: boolean,
): Record<Encoding, Compressor> {
  const brotli = (body: Buffer) => ({
    chunkSize: chunkSize(body),
    params: {
      [constants.BROTLI_PARAM_QUALITY]: levels.brotliQuality,
      ...(fitWindow ? { [constants.BROTLI_PARAM_LGWIN]: fittedWindow(body) } : {}),
    },
  });
  const zlib = (body: Buffer) => ({ chunkSize: chunkSize(body), level: levels.zlibLevel });
  return {
    br: (body) => brotliCompressSync(body, brotli(body)),
    gzip: (body) => gzipSync(body, zlib(body)),
    deflate: (body) => deflateSync(body, zlib(body)),
  };
}

/** An encoded answer: its encoding and bytes. */
export interface Encoded {
  readonly encoding: Encoding;
  readonly body: Buffer;
}

/** An encoded copy of a kept body: what was sent for one `Accept-Encoding` header. */
interface EncodedCopy extends Encoded {
  readonly acceptEncoding: string;
}

/** Encoded copies kept per body; a few `Accept-Encoding` spellings cover the browsers and SDKs. */
const COPIES_PER_BODY = 3;

/** `Accept-Encoding` spellings the plugin reads as gzip (`*`, and `x-gzip`, RFC 9110 §8.4.1.3). */
const GZIP_ALIASES = /\*|x-gzip/g;

/**
 * The compression of evaluation answers, one per app: the encoding a request gets (negotiated as
 * `@fastify/compress` negotiates, with the library it uses), the compressors, and encoded copies
 * of the answers the answer cache keeps. The evaluation front and the routes' hook both encode
 * through it, so that a request gets the same bytes whichever answers it.
 */
export class AnswerCompression {
  private readonly negotiator = new Negotiator<Encoding>({ supportedValues: [...ENCODINGS] });
  private readonly renderedNegotiator = new Negotiator<Encoding>({
    supportedValues: [...RENDERED_ENCODINGS],
  });
  private readonly joined = new JoinedGzip();
  /** As the plugin compresses (the same bytes whichever answers a request). */
  private readonly dynamic = compressors(LEVELS.dynamic, false);
  private readonly kept = compressors(LEVELS.kept, true);
  /**
   * Copies live as long as their body (a `WeakMap`: the answer cache owns the body), at most
   * `COPIES_PER_BODY` each (a caller cannot grow them with odd headers), each a fraction of the
   * body's size (~0.7–1 KB for 15 KB).
   */
  private readonly copies = new WeakMap<Buffer, EncodedCopy[]>();

  /** `writer`: the app's, whose renders compression may join from pieces (`JoinedGzip`). */
  constructor(private readonly writer: AnswerWriter) {}

  /**
   * The encoding a request gets, or `undefined` (none accepted, or `X-No-Compression`);
   * `rendered`: for an answer joined from pieces.
   */
  encodingFor(headers: IncomingHttpHeaders, rendered = false): Encoding | undefined {
    const accepted = headers['accept-encoding'];
    if (accepted === undefined || headers['x-no-compression'] !== undefined) return undefined;
    const negotiator = rendered ? this.renderedNegotiator : this.negotiator;
    return negotiator.negotiate(accepted.toLowerCase().replace(GZIP_ALIASES, 'gzip')) ?? undefined;
  }

  /**
   * `body` encoded for the request with `headers`, or `undefined` to send it as it is (under the
   * threshold, or no encoding accepted). A `kept` body (the answer cache's, never written again)
   * is encoded once per `Accept-Encoding` header and the copy sent from then on. The writer's
   * latest answer (`render`: its `Rendered.render`) is joined from pieces in gzip when the
   * request takes gzip; any other answer is compressed whole, at the fastest levels.
   */
  encode(
    headers: IncomingHttpHeaders,
    body: Buffer | string,
    kept: boolean,
    render?: number,
  ): Encoded | undefined {
    if (Buffer.byteLength(body) < THRESHOLD_BYTES) return undefined;
    const written = kept || typeof body === 'string' ? undefined : this.writer.fragmentsOf(render);
    const encoding = this.encodingFor(headers, written !== undefined);
    if (encoding === undefined) return undefined;
    const bytes = typeof body === 'string' ? Buffer.from(body) : body;
    if (written !== undefined && encoding === 'gzip') {
      const joined = this.joined.encode(written, bytes);
      if (joined !== undefined) return { encoding, body: joined };
    }
    if (!kept) return { encoding, body: this.dynamic[encoding](bytes) };
    const acceptEncoding = headers['accept-encoding'] as string;
    const copies = this.copies.get(bytes);
    const copy = copies?.find((each) => each.acceptEncoding === acceptEncoding);
    if (copy !== undefined) return copy;
    const encoded: EncodedCopy = { acceptEncoding, encoding, body: this.kept[encoding](bytes) };
    if (copies === undefined) this.copies.set(bytes, [encoded]);
    else if (copies.length < COPIES_PER_BODY) copies.push(encoded);
    return encoded;
  }
}

/**
 * `compression`: compresses answers over 1 KB in the encoding the caller prefers among br, gzip
 * and deflate (`@fastify/compress`, at `LEVELS.dynamic`). Event streams are never compressed (the
 * plugin skips `text/event-stream`, and the stream routes write to the socket themselves), and
 * request bodies are read as before, never decompressed. Kept evaluation answers are encoded by
 * the returned `AnswerCompression` (which the evaluation front uses too), the plugin leaving an
 * answer that has a `Content-Encoding` alone. The plugin is loaded only here: with compression
 * off (the default) its modules would take ~1 MB of heap for nothing.
 */
export async function installCompression(
  app: FastifyInstance,
  writer: AnswerWriter,
): Promise<AnswerCompression> {
  const { default: fastifyCompress } = await import('@fastify/compress');
  const compression = new AnswerCompression(writer);
  // Route hooks, as the plugin's own: this one runs before it, the other after.
  app.addHook('onRoute', (route) => {
    route.onSend = [...[route.onSend ?? []].flat(), sendEvaluationEncoded(compression)];
  });
  await app.register(fastifyCompress, {
    global: true,
    globalDecompression: false,
    threshold: THRESHOLD_BYTES,
    syncThreshold: SYNC_THRESHOLD_BYTES,
    encodings: [...ENCODINGS],
    brotliOptions: { params: { [constants.BROTLI_PARAM_QUALITY]: LEVELS.dynamic.brotliQuality } },
    zlibOptions: { level: LEVELS.dynamic.zlibLevel },
  });
  // The plugin adds `accept-encoding` to `Vary` unless it finds it in that spelling (the
  // evaluation answers name it already, as `Accept-Encoding`), in an `onSend` hook it gives each
  // route; this one comes after it.
  app.addHook('onRoute', (route) => {
    route.onSend = [...[route.onSend ?? []].flat(), varyNamedOnce];
  });
  return compression;
}

/**
 * Before the plugin: a kept body (`sendKept`) is sent as its encoded copy, a rendered one
 * (`sendRendered`) as the evaluation front would send it.
 */
function sendEvaluationEncoded(compression: AnswerCompression): onSendHookHandler {
  return async (request, reply, payload) => {
    const kept = reply.sendsKeptBody;
    if ((!kept && reply.sentRender === 0) || !Buffer.isBuffer(payload) || reply.statusCode !== 200)
      return payload;
    const encoded = compression.encode(request.headers, payload, kept, reply.sentRender);
    if (encoded === undefined) return payload;
    // As the plugin: `Vary` names `Accept-Encoding` (once: `varyNamedOnce` comes after).
    const vary = reply.getHeader('vary');
    reply.header('vary', typeof vary === 'string' ? `${vary}, accept-encoding` : 'accept-encoding');
    reply.header('content-encoding', encoded.encoding);
    reply.header('content-length', encoded.body.length);
    return encoded.body;
  };
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
