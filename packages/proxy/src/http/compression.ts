import type { FastifyInstance, onSendHookHandler } from 'fastify';

/** Answers smaller than this are sent as they are (Unleash Proxy's threshold). */
const THRESHOLD_BYTES = 1024;
/**
 * Answers up to this size are compressed in one synchronous call. The plugin's default on a
 * 2-core machine is 8 KiB: above it each answer gets a compression stream of its own, which cost
 * ~1 ms of CPU per 15 KB answer (200 flags) and ~90 MB of memory under load, against ~0.13 ms in
 * one call. Evaluation answers stay far below this (~75 KB at 1,000 flags).
 */
const SYNC_THRESHOLD_BYTES = 512 * 1024;

/**
 * `compression`: compresses answers over 1 KB in the encoding the caller prefers among br, gzip
 * and deflate (`@fastify/compress`; zstd is left out, so that every Node version answers alike).
 * Event streams are never compressed (the plugin skips `text/event-stream`, and the stream
 * routes write to the socket themselves), and request bodies are read as before, never
 * decompressed. The plugin is loaded only here: with compression off (the default) its modules
 * would take ~1.5 MB of heap for nothing.
 */
export async function installCompression(app: FastifyInstance): Promise<void> {
  const { default: fastifyCompress } = await import('@fastify/compress');
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
    route.onSend = [...[route.onSend ?? []].flat(), varyNamedOnce];
  });
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
