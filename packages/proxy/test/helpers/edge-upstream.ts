import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RecordedRequest } from './fake-upstream.js';
import { UpstreamServer } from './upstream-server.js';

/** A token the fake upstream knows, as `/edge/validate` reports it. */
export interface KnownToken {
  readonly type: 'client' | 'frontend' | 'admin';
  readonly environment: string;
  readonly projects: readonly string[];
}

export interface EnvironmentPayload {
  readonly version: number;
  readonly features: ReadonlyArray<{ readonly name: string; readonly project?: string }>;
  readonly segments?: readonly unknown[];
}

/**
 * A real HTTP server standing in for an Unleash-compatible upstream of many environments, as
 * unleash-server and flags-server are: `GET /api/client/features` answers the payload of the
 * client token's environment narrowed to its projects (ETag, 304), `POST /edge/validate` confirms
 * the known tokens of a request, reports get `reportStatus`. Tokens can be added and revoked, and
 * payloads changed, while it runs; every request is recorded.
 */
export class EdgeUpstream extends UpstreamServer {
  readonly requests: RecordedRequest[] = [];
  readonly tokens = new Map<string, KnownToken>();
  /** Status answered to reports (metrics, registrations). */
  reportStatus = 202;
  /** While `true`, every request is answered 503 (an upstream in trouble). */
  failing = false;
  /** Tokens whose requests are answered 503 (the upstream in trouble for them only). */
  readonly failingFor = new Set<string>();
  /**
   * Tokens that make the upstream refuse a whole `/edge/validate` batch holding one of them with
   * 400, as flags-server did with a token over 512 characters (issue #40).
   */
  refusesBatchWith: ((token: string) => boolean) | undefined;

  constructor(private readonly payloads: Map<string, EnvironmentPayload>) {
    super();
  }

  setPayload(environment: string, payload: EnvironmentPayload): void {
    this.payloads.set(environment, payload);
  }

  validateCalls(): RecordedRequest[] {
    return this.requests.filter((request) => request.path === '/edge/validate');
  }

  featureRequests(): RecordedRequest[] {
    return this.requests.filter((request) => request.path === '/api/client/features');
  }

  protected handle(request: IncomingMessage, response: ServerResponse): void {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const url = new URL(request.url ?? '/', 'http://upstream');
      const body = Buffer.concat(chunks).toString('utf8');
      const failing = this.failing || this.failingFor.has(request.headers.authorization ?? '');
      const status = failing ? 503 : this.answer(url, request, body, response);
      if (failing) response.writeHead(503).end();
      this.requests.push({
        method: request.method ?? '',
        path: url.pathname,
        query: url.searchParams,
        headers: request.headers,
        body,
        at: Date.now(),
        status,
      });
    });
  }

  private answer(
    url: URL,
    request: IncomingMessage,
    body: string,
    response: ServerResponse,
  ): number {
    if (url.pathname === '/edge/validate') {
      const asked = (JSON.parse(body) as { tokens: string[] }).tokens;
      const refuses = this.refusesBatchWith;
      if (refuses !== undefined && asked.some((token) => refuses(token))) {
        response.writeHead(400, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ name: 'BadDataError', message: 'refused', details: [] }));
        return 400;
      }
      const tokens = asked.flatMap((token) => {
        const known = this.tokens.get(token);
        return known === undefined ? [] : [{ token, ...known }];
      });
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ tokens }));
      return 200;
    }
    if (url.pathname !== '/api/client/features') {
      response.writeHead(this.reportStatus).end();
      return this.reportStatus;
    }
    const token = this.tokens.get(request.headers.authorization ?? '');
    if (token === undefined || token.type !== 'client') {
      response.writeHead(token === undefined ? 401 : 403).end();
      return token === undefined ? 401 : 403;
    }
    const payload = this.payloads.get(token.environment) ?? { version: 2, features: [] };
    const all = token.projects.includes('*');
    const visible = {
      ...payload,
      features: payload.features.filter(
        (feature) => all || token.projects.includes(feature.project ?? 'default'),
      ),
    };
    const json = JSON.stringify(visible);
    const etag = `"${createHash('sha1').update(json).digest('hex').slice(0, 16)}"`;
    if (request.headers['if-none-match'] === etag) {
      response.writeHead(304, { etag }).end();
      return 304;
    }
    response.writeHead(200, { 'content-type': 'application/json', etag }).end(json);
    return 200;
  }
}

/** A feature that is on for everyone, in `project`. */
export function onFeature(name: string, project = 'default') {
  return {
    name,
    project,
    enabled: true,
    strategies: [{ name: 'default', parameters: {} }],
  };
}
