import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { waitFor } from './proxy.js';

/**
 * A Server-Sent Events connection read over real HTTP (`fetch`) and parsed with
 * `eventsource-parser`: every event and comment is recorded as it arrives.
 */
export class SseClient {
  readonly events: EventSourceMessage[] = [];
  readonly comments: string[] = [];
  /** `true` once the server ended the stream. */
  ended = false;

  private constructor(
    readonly response: Response,
    private readonly abort: AbortController,
  ) {}

  /** Opens `url`; a non-200 answer is returned with nothing read (see `response`). */
  static async open(url: string, headers: Record<string, string>): Promise<SseClient> {
    const abort = new AbortController();
    const response = await fetch(url, { headers, signal: abort.signal });
    const opened = new SseClient(response, abort);
    if (response.status === 200 && response.body !== null) void opened.read(response.body);
    return opened;
  }

  private async read(body: ReadableStream<Uint8Array>): Promise<void> {
    const parser = createParser({
      onEvent: (event) => this.events.push(event),
      onComment: (comment) => this.comments.push(comment),
    });
    const decoder = new TextDecoder();
    try {
      for await (const chunk of body) parser.feed(decoder.decode(chunk, { stream: true }));
    } catch {
      // Aborted by `close`, or the socket was destroyed.
    }
    this.ended = true;
  }

  /** The events named `name`, their data parsed as JSON. */
  // biome-ignore lint/suspicious/noExplicitAny: event data is checked by the assertions
  named(name: string): Array<{ id: string | undefined; data: any }> {
    return this.events
      .filter((event) => event.event === name)
      .map((event) => ({ id: event.id, data: JSON.parse(event.data) }));
  }

  /** Waits until `count` events have arrived. */
  async received(count: number): Promise<void> {
    await waitFor(() => this.events.length >= count);
  }

  close(): void {
    this.abort.abort();
  }
}
