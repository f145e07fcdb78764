import type { IncomingMessage, ServerResponse } from 'node:http';
import { UpstreamServer } from './upstream-server.js';

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
export class FaultUpstream extends UpstreamServer {
  readonly polls: Poll[] = [];
  inFlight = 0;
  maxInFlight = 0;
  answer: FeaturesAnswer;

  constructor(answer: FeaturesAnswer) {
    super();
    this.answer = answer;
  }

  /** Gaps between consecutive polls since `from` (epoch ms), in ms. */
  gapsSince(from: number): number[] {
    const times = this.polls.filter((poll) => poll.at >= from).map((poll) => poll.at);
    return times.slice(1).map((at, i) => at - (times[i] as number));
  }

  protected handle(request: IncomingMessage, response: ServerResponse): void {
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
