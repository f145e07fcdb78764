import { type ClientRequest, type IncomingMessage, request } from 'node:http';

/** One dispatched event, as an `EventSource` sees it. */
export interface EventSourceMessage {
  readonly event: string | undefined;
  readonly id: string | undefined;
  readonly data: string;
}

/**
 * The event-stream format's parsing rules (WHATWG HTML, "Interpreting an event stream"), enough
 * for tests: `event`, `id`, multi-line `data`, comments, CRLF/CR/LF line ends. Written here
 * because `eventsource-parser`'s `source` export condition (which this repository resolves)
 * points at TypeScript files that neither tsc nor tsx here can load.
 */
function eventStreamParser(
  onEvent: (event: EventSourceMessage) => void,
  onComment: (comment: string) => void,
): (chunk: string) => void {
  let pending = '';
  let event: string | undefined;
  let id: string | undefined;
  let data: string[] = [];
  return (chunk) => {
    pending += chunk;
    const lines = pending.split(/\r\n|\r|\n/);
    pending = lines.pop() ?? '';
    for (const line of lines) {
      if (line === '') {
        if (data.length > 0) onEvent({ event, id, data: data.join('\n') });
        event = undefined;
        data = [];
        continue;
      }
      if (line.startsWith(':')) {
        onComment(line.slice(1));
        continue;
      }
      const colon = line.indexOf(':');
      const field = colon === -1 ? line : line.slice(0, colon);
      const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
      else if (field === 'id') id = value;
    }
  };
}

/** An open Server-Sent Events response, for tests. */
export interface SseConnection {
  readonly status: number;
  readonly headers: IncomingMessage['headers'];
  /** Every event received so far, in order. */
  readonly events: EventSourceMessage[];
  /** Comment lines received so far (keep-alives). */
  readonly comments: string[];
  /** The body when the answer is not a stream (an error). */
  readonly body: Promise<string>;
  /** Resolves when the server ends the response or the socket closes. */
  readonly ended: Promise<void>;
  readonly isEnded: () => boolean;
  close(): void;
}

export interface SseOptions {
  /** The local address to connect from (another loopback address: another client). */
  readonly from?: string;
  /** Called in the turn each event arrives, after it is added to `events`. */
  readonly onEvent?: (event: EventSourceMessage) => void;
}

/** Opens `url` with `headers` and resolves once the status line and headers arrived. */
export function openSse(
  url: string,
  headers: Record<string, string>,
  { from, onEvent }: SseOptions = {},
): Promise<SseConnection> {
  return new Promise((resolve, reject) => {
    let outgoing: ClientRequest | undefined;
    outgoing = request(
      url,
      {
        headers: { accept: 'text/event-stream', ...headers },
        ...(from === undefined ? {} : { localAddress: from }),
      },
      (incoming) => {
        const events: EventSourceMessage[] = [];
        const comments: string[] = [];
        let text = '';
        let ended = false;
        const feed = eventStreamParser(
          (event) => {
            events.push(event);
            onEvent?.(event);
          },
          (comment) => comments.push(comment),
        );
        incoming.setEncoding('utf8');
        incoming.on('data', (chunk: string) => {
          text += chunk;
          feed(chunk);
        });
        const endedPromise = new Promise<void>((done) => {
          const finish = () => {
            ended = true;
            done();
          };
          incoming.once('end', finish);
          incoming.once('close', finish);
          incoming.once('error', finish);
        });
        resolve({
          status: incoming.statusCode ?? 0,
          headers: incoming.headers,
          events,
          comments,
          body: endedPromise.then(() => text),
          ended: endedPromise,
          isEnded: () => ended,
          close: () => outgoing?.destroy(),
        });
      },
    );
    outgoing.on('error', reject);
    outgoing.end();
  });
}
