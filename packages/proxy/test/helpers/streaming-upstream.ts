import type { IncomingMessage, ServerResponse } from 'node:http';
import { applyDelta, type DeltaEvent } from '@flags/engine';
import type { ClientFeatures } from '@flags/schemas';
import { FakeUpstream, type RecordedRequest } from './fake-upstream.js';

/**
 * A `FakeUpstream` that also streams, as flags-server and Unleash Enterprise do:
 * `GET /api/client/streaming` answers Server-Sent Events — `unleash-connected` with a hydration
 * first, then `unleash-updated` per change, `id:` = event id; a `Last-Event-ID` it still holds
 * resumes with the missed events (no hydration). Changes (`change`) update the polled payload too,
 * so both ways of syncing see the same configuration. A test can drop every stream, answer the
 * stream with a status of its own, or write raw text into the open streams.
 */
export class StreamingUpstream extends FakeUpstream {
  private current: ClientFeatures;
  private readonly log: Array<{ readonly id: number; readonly event: DeltaEvent }> = [];
  private readonly open = new Set<ServerResponse>();
  /** While set, `/api/client/streaming` answers this status instead of streaming. */
  streamStatus: number | undefined;

  constructor(payload: ClientFeatures) {
    super(payload);
    this.current = payload;
  }

  /** The id of the last change (0: none yet). */
  get lastId(): number {
    return this.log.at(-1)?.id ?? 0;
  }

  /** Streams currently open. */
  get openStreams(): number {
    return this.open.size;
  }

  streamRequests(): RecordedRequest[] {
    return this.requests.filter((request) => request.path === '/api/client/streaming');
  }

  /** Applies one change: recorded with the next id, polled from now on, sent to open streams. */
  change(event: DeltaEvent): number {
    const id = this.lastId + 1;
    this.log.push({ id, event: { ...event, eventId: id } as DeltaEvent });
    this.current = applyDelta(this.current, [event]);
    this.setPayload(this.current);
    for (const response of this.open)
      writeEvent(response, 'unleash-updated', id, [{ ...event, eventId: id } as DeltaEvent]);
    return id;
  }

  /** Drops every open stream (the sockets are destroyed mid-stream). */
  dropStreams(): void {
    for (const response of this.open) response.socket?.destroy();
    this.open.clear();
  }

  /** Writes `text` as it is into every open stream. */
  writeRaw(text: string): void {
    for (const response of this.open) response.write(text);
  }

  protected override handle(request: IncomingMessage, response: ServerResponse): void {
    const url = new URL(request.url ?? '/', 'http://upstream');
    if (url.pathname !== '/api/client/streaming') {
      super.handle(request, response);
      return;
    }
    const status = this.streamStatus ?? 200;
    this.requests.push({
      method: request.method ?? '',
      path: url.pathname,
      query: url.searchParams,
      headers: request.headers,
      body: '',
      at: Date.now(),
      status,
    });
    if (status !== 200) {
      response.writeHead(status, { 'content-type': 'application/json' }).end('{}');
      return;
    }
    response.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    });
    response.write(': connected\n\n');
    const resumeAfter = Number(request.headers['last-event-id']);
    const missed = this.log.filter((entry) => entry.id > resumeAfter);
    if (Number.isInteger(resumeAfter) && resumeAfter > 0 && resumeAfter <= this.lastId) {
      if (missed.length > 0)
        writeEvent(
          response,
          'unleash-updated',
          this.lastId,
          missed.map((entry) => entry.event),
        );
    } else {
      writeEvent(response, 'unleash-connected', this.lastId, [
        {
          type: 'hydration',
          eventId: this.lastId,
          features: this.current.features,
          segments: this.current.segments ?? [],
        },
      ]);
    }
    this.open.add(response);
    response.on('close', () => this.open.delete(response));
  }
}

function writeEvent(
  response: ServerResponse,
  name: string,
  id: number,
  events: readonly DeltaEvent[],
): void {
  response.write(`event: ${name}\nid: ${id}\ndata: ${JSON.stringify({ events })}\n\n`);
}
