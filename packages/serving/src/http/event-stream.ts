import { type OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyReply } from 'fastify';
import { addressShare } from './address-share.js';
import { HandedOffResponse } from './stream-front.js';

/** One Server-Sent Events frame: `event:`, `id:` and `data:` lines (multi-line data split). */
export interface EventFrame {
  readonly event?: string;
  readonly id?: string | number;
  readonly data: string;
}

/** The text of one frame, ending with the blank line that dispatches it. */
export function eventFrame(frame: EventFrame): string {
  let text = '';
  if (frame.event !== undefined) text += `event: ${frame.event}\n`;
  if (frame.id !== undefined) text += `id: ${frame.id}\n`;
  for (const line of frame.data.split(/\r\n|\r|\n/)) text += `data: ${line}\n`;
  return `${text}\n`;
}

/** A comment line: ignored by clients, it keeps idle connections open through load balancers. */
const KEEP_ALIVE = ': keep-alive\n\n';

export interface EventStreamHubOptions {
  /** Open streams at most; `open` refuses beyond it (the caller answers 429). */
  readonly maxStreams: number;
  /**
   * Open streams at most of one client address (IPv6 by /64, see `addressShare`), so that one
   * caller cannot take every slot (issue #40); 0 or none: only `maxStreams`.
   */
  readonly maxStreamsPerAddress?: number;
  /** Open streams at most of one key, token or credential; 0 or none: only `maxStreams`. */
  readonly maxStreamsPerKey?: number;
  /** Interval of the keep-alive comment sent to every open stream (ms; 0: none). */
  readonly keepAliveMs: number;
  /**
   * Bytes a stream may have waiting for its client when the next frame comes; beyond, the client
   * is not reading and the stream is closed (an SDK reconnects and resumes from its last event
   * id). Default `MAX_PENDING_BYTES`.
   */
  readonly maxPendingBytes?: number;
}

/** Who opens a stream, for the caps on one holder's share of the slots. */
export interface StreamHolder {
  /** The client address (`request.ip`: the forwarded one behind a trusted proxy). */
  readonly address: string;
  /** The key, token or credential the stream is opened with. */
  readonly key: string;
}

/** Why a stream is refused: every slot taken, or the share of its address or of its key. */
export type StreamRefusal = 'full' | 'address' | 'key';

/** The shares a stream counts in: its holder's address share and key. */
interface Shares {
  readonly address: string;
  readonly key: string;
}

/**
 * A client that keeps its connection open but stops reading would otherwise make the process hold
 * every frame sent to it from then on. Room for a large hydration (the first frame always goes).
 */
export const MAX_PENDING_BYTES = 4 * 1024 * 1024;

/**
 * Frames text as one chunk of a chunked body, for streams on a bare socket (their head said
 * `Transfer-Encoding: chunked`, as Node's response would have). The last text is kept: a change
 * goes to every stream of a scope as the same text, framed once.
 */
class Chunker {
  private lastText = '';
  /** Empty text, no chunk: an empty chunk would end the body. */
  private lastChunk = '';

  of(text: string): string {
    if (text !== this.lastText) {
      this.lastChunk = `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;
      this.lastText = text;
    }
    return this.lastChunk;
  }
}

/** The last chunk of a chunked body. */
const LAST_CHUNK = '0\r\n\r\n';

/**
 * One open SSE stream. It holds only its topic and where its frames go, not Fastify's request and
 * reply: Node's response, or the bare socket when the stream front handed the response over (see
 * `EventStreamHub.open`), so an idle stream costs little more than its socket.
 */
export class EventStream<Topic> {
  constructor(
    readonly topic: Topic,
    private readonly target: ServerResponse | Socket,
    private readonly chunker: Chunker,
    private readonly maxPendingBytes: number,
    /** The shares it counts in until it leaves the hub (none: opened without a holder). */
    readonly shares: Shares | undefined,
  ) {}

  get open(): boolean {
    return !this.target.writableEnded && !this.target.destroyed;
  }

  /**
   * Writes one frame (or preformatted frames); returns false once the stream is closed, or when it
   * closes it because too much is still waiting for the client (`maxPendingBytes`).
   */
  send(frame: EventFrame | string): boolean {
    if (!this.open) return false;
    if (this.target.writableLength > this.maxPendingBytes) {
      this.target.destroy();
      return false;
    }
    const text = typeof frame === 'string' ? frame : eventFrame(frame);
    if (this.target instanceof ServerResponse) this.target.write(text);
    else this.target.write(this.chunker.of(text));
    return true;
  }

  close(): void {
    if (!this.open) return;
    if (this.target instanceof ServerResponse) this.target.end();
    else {
      // Closed once the last chunk is out, without waiting for the client to close its side.
      this.target.write(LAST_CHUNK);
      this.target.destroySoon();
    }
  }
}

/**
 * The open event streams of one process, by topic (an environment, a token scope). One timer
 * sends the keep-alive comment to all of them, instead of one timer per stream; `closeAll`
 * ends them when the app closes, so shutdown does not wait for clients to leave. Beside the cap on
 * all streams, each client address and each key may hold a share of them at most.
 */
export class EventStreamHub<Topic> {
  /** By response or socket, so that one `close` listener serves every stream (see `forget`). */
  private readonly streams = new Map<ServerResponse | Socket, EventStream<Topic>>();
  /** Open streams by address share and by key; an entry goes when its last stream does. */
  private readonly byAddress = new Map<string, number>();
  private readonly byKey = new Map<string, number>();
  private readonly chunker = new Chunker();
  /**
   * The `close` listener of every stream's response: it removes the response it is called on. One
   * function for all, rather than a closure (and a `once` wrapper) per stream, each of which an
   * idle stream would keep.
   */
  private readonly forget: (this: ServerResponse | Socket) => void;
  private readonly keepAlive: NodeJS.Timeout | undefined;

  constructor(private readonly options: EventStreamHubOptions) {
    const remove = (target: ServerResponse | Socket) => this.remove(target);
    this.forget = function forget(this: ServerResponse | Socket) {
      remove(this);
    };
    if (options.keepAliveMs > 0) {
      this.keepAlive = setInterval(() => {
        for (const stream of this.streams.values()) stream.send(KEEP_ALIVE);
      }, options.keepAliveMs);
      this.keepAlive.unref();
    }
  }

  get size(): number {
    return this.streams.size;
  }

  /** Whether another stream may open now. */
  get full(): boolean {
    return this.streams.size >= this.options.maxStreams;
  }

  /** Why a stream of `holder` may not open now, if it may not (checked by `open` too). */
  refusal(holder?: StreamHolder): StreamRefusal | undefined {
    if (this.full) return 'full';
    if (holder === undefined) return undefined;
    const { maxStreamsPerAddress = 0, maxStreamsPerKey = 0 } = this.options;
    if (
      maxStreamsPerAddress > 0 &&
      (this.byAddress.get(addressShare(holder.address)) ?? 0) >= maxStreamsPerAddress
    )
      return 'address';
    if (maxStreamsPerKey > 0 && (this.byKey.get(holder.key) ?? 0) >= maxStreamsPerKey) return 'key';
    return undefined;
  }

  /**
   * Takes the reply over as an SSE stream: status 200, the headers set on the reply so far (CORS,
   * custom headers) and the event-stream headers. Returns `undefined` when the hub is full, or
   * `holder`'s address or key holds its share (`refusal` says which); the caller then answers 429
   * itself. The stream leaves the hub, and its shares, when the client disconnects.
   */
  open(reply: FastifyReply, topic: Topic, holder?: StreamHolder): EventStream<Topic> | undefined {
    if (this.refusal(holder) !== undefined) return undefined;
    const headers: OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(reply.getHeaders()))
      if (value !== undefined) headers[name] = value;
    reply.hijack();
    const response = reply.raw;
    response.writeHead(200, {
      ...headers,
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      // Proxies such as nginx buffer responses unless told not to; events must go out at once.
      'x-accel-buffering': 'no',
    });
    // The socket's idle timeout would end a quiet stream; keep-alive comments are its heartbeat.
    response.socket?.setTimeout(0);
    response.flushHeaders();
    // A response of the stream front: the head is written, so the bare socket is all the stream
    // needs; the request and response become garbage. It keeps reading, to see the client leave.
    const socket = response instanceof HandedOffResponse ? response.socket : null;
    if (socket !== null) {
      response.detachSocket(socket);
      // Node's server allows half-open sockets: a client that leaves must be answered with an end.
      socket.on('end', socket.end);
      socket.resume();
    }
    const target = socket ?? response;
    const shares =
      holder === undefined ? undefined : { address: addressShare(holder.address), key: holder.key };
    const stream = new EventStream(
      topic,
      target,
      this.chunker,
      this.options.maxPendingBytes ?? MAX_PENDING_BYTES,
      shares,
    );
    this.streams.set(target, stream);
    if (shares !== undefined) {
      this.byAddress.set(shares.address, (this.byAddress.get(shares.address) ?? 0) + 1);
      this.byKey.set(shares.key, (this.byKey.get(shares.key) ?? 0) + 1);
    }
    target.on('close', this.forget);
    return stream;
  }

  /** Takes the stream of `target` out of the hub and its shares (nothing if it is not in). */
  private remove(target: ServerResponse | Socket): void {
    const stream = this.streams.get(target);
    if (stream === undefined) return;
    this.streams.delete(target);
    if (stream.shares === undefined) return;
    release(this.byAddress, stream.shares.address);
    release(this.byKey, stream.shares.key);
  }

  /** Sends `frame` to every open stream whose topic `matches`; returns how many got it. */
  broadcast(frame: EventFrame | string, matches: (topic: Topic) => boolean = () => true): number {
    const text = typeof frame === 'string' ? frame : eventFrame(frame);
    let sent = 0;
    for (const stream of this.streams.values())
      if (matches(stream.topic) && stream.send(text)) sent++;
    return sent;
  }

  /** Ends every open stream whose topic `ends`; returns how many it ended. */
  closeWhere(ends: (topic: Topic) => boolean): number {
    let closed = 0;
    for (const [target, stream] of this.streams) {
      if (!ends(stream.topic)) continue;
      stream.close();
      this.remove(target);
      closed++;
    }
    return closed;
  }

  /** Every open stream (for senders that write a different frame to each topic). */
  [Symbol.iterator](): IterableIterator<EventStream<Topic>> {
    return this.streams.values();
  }

  closeAll(): void {
    if (this.keepAlive) clearInterval(this.keepAlive);
    for (const stream of this.streams.values()) stream.close();
    this.streams.clear();
    this.byAddress.clear();
    this.byKey.clear();
  }
}

/** One stream fewer in `count`'s entry for `share`; the entry goes at zero. */
function release(count: Map<string, number>, share: string): void {
  const left = (count.get(share) ?? 0) - 1;
  if (left > 0) count.set(share, left);
  else count.delete(share);
}

/**
 * An event id a client sent back (`If-None-Match` of `/api/client/delta`, `Last-Event-ID` of a
 * stream): a decimal number, quotes and a weak prefix trimmed; anything else is `undefined`.
 */
export function eventIdOf(header: string | string[] | undefined): number | undefined {
  if (typeof header !== 'string') return undefined;
  const text = header
    .trim()
    .replace(/^W\//, '')
    .replace(/^"(.*)"$/, '$1');
  if (!/^\d{1,16}$/.test(text)) return undefined;
  const id = Number(text);
  return Number.isSafeInteger(id) ? id : undefined;
}
