import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { Agent, request } from 'undici';

/** An SSE response read over real HTTP: its status, headers and the events parsed so far. */
export interface OpenedStream {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  /** The body of a refused stream (JSON error); empty for an open one. */
  readonly text: string;
  readonly events: EventSourceMessage[];
  /** Comment lines received (keep-alives). */
  readonly comments: string[];
  /** The server ended the stream. */
  readonly ended: boolean;
  close(): void;
}

/**
 * Opens `url` as an event stream (as `EventSource` would: GET, `Accept: text/event-stream`),
 * from the local address `from` when given (another loopback address: another client).
 */
export async function openEventStream(
  url: string,
  headers: Record<string, string> = {},
  from?: string,
): Promise<OpenedStream> {
  const controller = new AbortController();
  const dispatcher = from === undefined ? undefined : new Agent({ localAddress: from });
  const response = await request(url, {
    method: 'GET',
    headers: { accept: 'text/event-stream', ...headers },
    signal: controller.signal,
    ...(dispatcher === undefined ? {} : { dispatcher }),
  });
  const events: EventSourceMessage[] = [];
  const comments: string[] = [];
  const isStream = String(response.headers['content-type'] ?? '').startsWith('text/event-stream');
  let text = '';
  let ended = false;
  if (!isStream) text = await response.body.text();
  else {
    const parser = createParser({
      onEvent: (event) => events.push(event),
      onComment: (comment) => comments.push(comment),
    });
    const decoder = new TextDecoder();
    response.body.on('data', (chunk: Buffer) =>
      parser.feed(decoder.decode(chunk, { stream: true })),
    );
    response.body.on('end', () => {
      ended = true;
    });
    // An aborted stream is no error for the tests.
    response.body.on('error', () => {});
  }
  return {
    status: response.statusCode,
    headers: response.headers,
    text,
    events,
    comments,
    get ended() {
      return ended;
    },
    close: () => {
      controller.abort();
      void dispatcher?.destroy();
    },
  };
}
