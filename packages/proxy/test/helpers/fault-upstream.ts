import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** How the fault upstream answers one `GET /api/client/features`. */
export type FeaturesAnswer = (request: IncomingMessage, response: ServerResponse) => void;

export interface Poll {
  readonly at: number;
  readonly ifNoneMatch: string | undefined;
}

/**
 * An upstream whose answer to `GET /client/features` is a function the test swaps at will, and
 * which measures what the proxy does to it: when each poll arrived and how many were in flight at
 * once. Other paths (register, metrics) get 202.
 */
export class FaultUpstream {
  readonly polls: Poll[] = [];
  inFlight = 0;
  maxInFlight = 0;
  answer: FeaturesAnswer;
  private server: Server | undefined;
  private port = 0;

  constructor(answer: FeaturesAnswer) {
    this.answer = answer;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/api`;
  }

  /** Gaps between consecutive polls since `from` (epoch ms), in ms. */
  gapsSince(from: number): number[] {
    const times = this.polls.filter((poll) => poll.at >= from).map((poll) => poll.at);
    return times.slice(1).map((at, i) => at - (times[i] as number));
  }

  async start(port = 0): Promise<this> {
    const server = createServer((request, response) => {
      const path = (request.url ?? '/').split('?', 1)[0];
      if (path !== '/api/client/features') {
        request.resume();
        request.on('end', () => response.writeHead(202).end());
        return;
      }
      this.polls.push({ at: Date.now(), ifNoneMatch: request.headers['if-none-match'] });
      this.inFlight++;
      this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
      let open = true;
      const finished = () => {
        if (!open) return;
        open = false;
        this.inFlight--;
      };
      response.on('close', finished);
      response.on('finish', finished);
      this.answer(request, response);
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
    return this;
  }

  /** Refuses connections from now on (until `start(port)` again). */
  async stop(): Promise<void> {
    const server = this.server;
    if (server === undefined) return;
    this.server = undefined;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  async restart(): Promise<void> {
    await this.start(this.port);
  }

  /** A free port that nothing listens on (for "down at start"). */
  static async freePort(): Promise<number> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    return port;
  }
}

/** 200 with the payload and an ETag (304 when it matches). */
export function servePayload(payload: unknown, etag: string): FeaturesAnswer {
  const body = JSON.stringify(payload);
  return (request, response) => {
    if (request.headers['if-none-match'] === etag) {
      response.writeHead(304, { etag }).end();
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json', etag }).end(body);
  };
}

/** A fixed status and body. */
export function fixed(
  status: number,
  body = '',
  headers: Record<string, string> = {},
): FeaturesAnswer {
  return (_request, response) => {
    response.writeHead(status, headers).end(body);
  };
}

/** Answers after `delayMs` (the proxy's timeout should fire first). */
export function slow(delayMs: number, then: FeaturesAnswer): FeaturesAnswer {
  return (request, response) => {
    const timer = setTimeout(() => {
      if (!response.destroyed) then(request, response);
    }, delayMs);
    response.on('close', () => clearTimeout(timer));
  };
}
