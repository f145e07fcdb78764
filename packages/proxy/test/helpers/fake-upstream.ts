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

/**
 * A real HTTP server standing in for the upstream client API: serves a payload with an ETag
 * (304 on a match), records every request, and can be switched to failure modes or shut down.
 */
export class FakeUpstream extends UpstreamServer {
  readonly requests: RecordedRequest[] = [];
  mode: UpstreamMode = 'ok';
  /** Status answered to `POST /api/client/metrics` and `/register` (202 by default). */
  reportStatus = 202;
  retryAfter: string | undefined;
  private payload: unknown;
  private etag = '';

  constructor(payload: unknown) {
    super();
    this.setPayload(payload);
  }

  setPayload(payload: unknown): void {
    this.payload = payload;
    this.etag = `"${createHash('sha1').update(JSON.stringify(payload)).digest('hex').slice(0, 16)}"`;
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
        status: url.pathname === '/api/client/features' ? 0 : this.reportStatus,
      });
      if (url.pathname !== '/api/client/features') {
        response.writeHead(this.reportStatus).end();
        return;
      }
      this.answerFeatures(request.headers, response);
    });
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
      case 'ok':
        if (headers['if-none-match'] === this.etag) {
          response.writeHead(304, { etag: this.etag }).end();
          return;
        }
        response
          .writeHead(200, { 'content-type': 'application/json', etag: this.etag })
          .end(JSON.stringify(this.payload));
    }
  }
}
