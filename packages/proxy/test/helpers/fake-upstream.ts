import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { UpstreamServer } from './upstream-server.js';

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  readonly at: number;
  /** Status answered (for reports: `reportStatus` at the time). */
  readonly status: number;
}

export type UpstreamMode =
  | 'ok'
  | 'error500'
  | 'unauthorized'
  | 'forbidden'
  | 'garbage'
  | 'invalid'
  | 'throttle'
  | 'hang';

/** What `POST /edge/validate` answers for a token the upstream knows. */
export interface KnownToken {
  readonly type: 'client' | 'frontend';
  readonly environment: string;
  readonly projects: readonly string[];
}

interface Served {
  readonly payload: unknown;
  readonly etag: string;
}

function served(payload: unknown): Served {
  const hash = createHash('sha1').update(JSON.stringify(payload)).digest('hex').slice(0, 16);
  return { payload, etag: `"${hash}"` };
}

/**
 * A real HTTP server standing in for the upstream client API: serves a payload with an ETag
 * (304 on a match), records every request, and can be switched to failure modes or shut down.
 * It can serve another payload per client token (`serveToken`), answer `POST /edge/validate` for
 * the tokens it knows (`knownTokens`), and answer a path with a status of its own (`pathStatus`).
 */
export class FakeUpstream extends UpstreamServer {
  readonly requests: RecordedRequest[] = [];
  mode: UpstreamMode = 'ok';
  /** Status answered to `POST /api/client/metrics`, `/metrics/bulk` and `/register` (202 by default). */
  reportStatus = 202;
  /** Statuses by path that win over `reportStatus` (e.g. 404 for `/api/client/metrics/bulk`). */
  readonly pathStatus = new Map<string, number>();
  /** Tokens `POST /edge/validate` confirms. */
  readonly knownTokens = new Map<string, KnownToken>();
  retryAfter: string | undefined;
  private served: Served = served(null);
  private readonly byToken = new Map<string, Served>();

  constructor(payload: unknown) {
    super();
    this.setPayload(payload);
  }

  setPayload(payload: unknown): void {
    this.served = served(payload);
  }

  /** Serves `payload` to requests with `token` (others get the default payload). */
  serveToken(token: string, payload: unknown): void {
    this.byToken.set(token, served(payload));
  }

  featureRequests(): RecordedRequest[] {
    return this.requests.filter((request) => request.path === '/api/client/features');
  }

  /** Bodies of the metrics reports the upstream accepted (2xx), parsed. */
  // biome-ignore lint/suspicious/noExplicitAny: report bodies are checked by the assertions
  acceptedMetrics(): any[] {
    return this.requests
      .filter((request) => request.path === '/api/client/metrics' && request.status < 300)
      .map((request) => JSON.parse(request.body));
  }

  /** Bodies of the bulk metrics the upstream accepted (2xx), parsed, with the token each came with. */
  // biome-ignore lint/suspicious/noExplicitAny: bulk bodies are checked by the assertions
  acceptedBulk(): Array<{ token: string | undefined; body: any; bytes: number }> {
    return this.requests
      .filter((request) => request.path === '/api/client/metrics/bulk' && request.status < 300)
      .map((request) => ({
        token: request.headers.authorization,
        body: JSON.parse(request.body),
        bytes: Buffer.byteLength(request.body),
      }));
  }

  /** Bodies of the registrations received, parsed. */
  // biome-ignore lint/suspicious/noExplicitAny: registration bodies are checked by the assertions
  registrations(): any[] {
    return this.requests
      .filter((request) => request.path === '/api/client/register')
      .map((request) => JSON.parse(request.body));
  }

  protected handle(request: IncomingMessage, response: ServerResponse): void {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const url = new URL(request.url ?? '/', 'http://upstream');
      this.requests.push({
        method: request.method ?? '',
        path: url.pathname,
        query: url.searchParams,
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
        status:
          url.pathname === '/api/client/features'
            ? 0
            : (this.pathStatus.get(url.pathname) ?? this.reportStatus),
      });
      if (url.pathname === '/edge/validate') {
        this.answerValidation(Buffer.concat(chunks).toString('utf8'), response);
        return;
      }
      if (url.pathname !== '/api/client/features') {
        response.writeHead(this.pathStatus.get(url.pathname) ?? this.reportStatus).end();
        return;
      }
      this.answerFeatures(request.headers, response);
    });
  }

  private answerValidation(body: string, response: ServerResponse): void {
    const asked: string[] = JSON.parse(body).tokens ?? [];
    const tokens = asked.flatMap((token) => {
      const known = this.knownTokens.get(token);
      return known === undefined ? [] : [{ token, ...known }];
    });
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ tokens }));
  }

  private answerFeatures(
    headers: IncomingHttpHeaders,
    response: import('node:http').ServerResponse,
  ): void {
    switch (this.mode) {
      case 'error500':
        response.writeHead(500, { 'content-type': 'text/plain' }).end('boom');
        return;
      case 'unauthorized':
        response.writeHead(401).end();
        return;
      case 'forbidden':
        response.writeHead(403).end();
        return;
      case 'throttle':
        response
          .writeHead(429, this.retryAfter === undefined ? {} : { 'retry-after': this.retryAfter })
          .end();
        return;
      case 'garbage':
        response
          .writeHead(200, { 'content-type': 'application/json' })
          .end('{"version": 2, "features": [');
        return;
      case 'invalid':
        response
          .writeHead(200, { 'content-type': 'application/json' })
          .end('{"version":2,"features":"nope"}');
        return;
      case 'hang':
        return;
      case 'ok': {
        const { payload, etag } = this.byToken.get(headers.authorization ?? '') ?? this.served;
        if (headers['if-none-match'] === etag) {
          response.writeHead(304, { etag }).end();
          return;
        }
        response
          .writeHead(200, { 'content-type': 'application/json', etag })
          .end(JSON.stringify(payload));
      }
    }
  }
}
