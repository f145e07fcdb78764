import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type ClientFeatures, MAX_VALIDATE_BODY_BYTES } from '@flags/schemas';
import { allProjects, parseUnleashToken, projectsOf } from '../auth/unleash-token.js';
import type { Logger } from '../config/options.js';
import { readBootstrapFile } from './bootstrap.js';

/** What a token may read, as an upstream would say in `/edge/validate`. */
interface OfflineToken {
  readonly token: string;
  readonly type: 'client' | 'frontend';
  readonly environment: string;
  readonly projects: readonly string[];
}

/** The environment of plain (not Unleash-format) tokens, as the proxy names it. */
const PLAIN_ENVIRONMENT = 'default';

function offlineToken(token: string, type: OfflineToken['type']): OfflineToken {
  const parsed = parseUnleashToken(token);
  return {
    token,
    type,
    environment: parsed?.environment ?? PLAIN_ENVIRONMENT,
    projects: (parsed === undefined ? undefined : projectsOf(parsed)) ?? ['*'],
  };
}

/**
 * The upstream of `flags-proxy offline`: a loopback HTTP server that answers the proxy the way an
 * Unleash server would, from the bootstrap file instead of a database, so that the proxy serves it
 * with all its usual behaviour (tokens, environments and projects, ETags, readiness). It answers
 * `/api/client/features` to the configured client tokens (and to one made up for each
 * environment that only Unleash-format frontend tokens name, so that it is synced too), filtered
 * by the token's projects; `/edge/validate` with the configured tokens it knows; usage reports and
 * registrations with 202, discarded. The file is read again every `reloadMs` (0: never); a read
 * that fails is logged and the last flags kept.
 */
export class OfflineUpstream {
  private readonly server: Server;
  private readonly tokens = new Map<string, OfflineToken>();
  private flags: ClientFeatures;
  /** The answer to each project list (joined), made once per read of the file. */
  private readonly answers = new Map<string, { readonly body: string; readonly etag: string }>();
  private timer: NodeJS.Timeout | undefined;
  /** The client tokens the proxy syncs with: the configured ones, then the made-up ones. */
  readonly syncTokens: readonly string[];

  private constructor(
    private readonly file: string,
    flags: ClientFeatures,
    clientTokens: readonly string[],
    frontendTokens: readonly string[],
  ) {
    this.flags = flags;
    for (const token of frontendTokens) this.tokens.set(token, offlineToken(token, 'frontend'));
    for (const token of clientTokens) this.tokens.set(token, offlineToken(token, 'client'));
    const synced = new Set(clientTokens.map((token) => offlineToken(token, 'client').environment));
    const sync = [...clientTokens];
    for (const { token: frontend, environment, type } of this.tokens.values()) {
      // Plain frontend tokens are client keys, served from the first client token's environment.
      if (type !== 'frontend' || parseUnleashToken(frontend) === undefined) continue;
      if (synced.has(environment)) continue;
      synced.add(environment);
      // Never given out: only this upstream and the proxy know it.
      const token = `*:${environment}.offline-${randomBytes(24).toString('hex')}`;
      this.tokens.set(token, offlineToken(token, 'client'));
      sync.push(token);
    }
    this.syncTokens = sync;
    this.server = createServer((request, response) => this.answer(request, response));
  }

  /** Reads `file` (throws naming what is wrong with it) and listens on a loopback port. */
  static async start(
    file: string,
    clientTokens: readonly string[],
    frontendTokens: readonly string[],
  ): Promise<OfflineUpstream> {
    const upstream = new OfflineUpstream(
      file,
      await readBootstrapFile(file),
      clientTokens,
      frontendTokens,
    );
    await new Promise<void>((resolve, reject) => {
      upstream.server.once('error', reject);
      upstream.server.listen(0, '127.0.0.1', resolve);
    });
    return upstream;
  }

  /** The API URL to give the proxy as its upstream. */
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/api`;
  }

  /** Reads the file again every `reloadMs`, logging a read that fails. */
  reload(reloadMs: number, log: Logger): void {
    if (reloadMs <= 0) return;
    this.timer = setInterval(() => {
      readBootstrapFile(this.file).then(
        (flags) => {
          this.flags = flags;
          this.answers.clear();
        },
        (error: unknown) =>
          log.warn(
            { err: (error as Error).message },
            'the bootstrap file could not be read again; the last flags are served',
          ),
      );
    }, reloadMs).unref();
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private answer(request: IncomingMessage, response: ServerResponse): void {
    const path = (request.url ?? '/').split('?', 1)[0];
    if (request.method === 'GET' && path === '/api/client/features')
      this.features(request, response);
    else if (request.method === 'POST' && path === '/edge/validate')
      this.validate(request, response);
    else if (request.method === 'POST') {
      request.resume();
      response.writeHead(202).end();
    } else response.writeHead(404).end();
  }

  private features(request: IncomingMessage, response: ServerResponse): void {
    const known = this.tokens.get(request.headers.authorization ?? '');
    if (known?.type !== 'client') {
      response.writeHead(401).end();
      return;
    }
    const { body, etag } = this.answerFor(known.projects);
    if (request.headers['if-none-match'] === etag) {
      response.writeHead(304, { etag }).end();
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json', etag }).end(body);
  }

  /** The file's flags in `projects`, as JSON, and their ETag. */
  private answerFor(projects: readonly string[]): { readonly body: string; readonly etag: string } {
    const scope = projects.join(',');
    let answer = this.answers.get(scope);
    if (answer === undefined) {
      const flags = this.flags;
      const visible = allProjects(projects)
        ? flags
        : {
            ...flags,
            features: flags.features.filter((feature) =>
              projects.includes(feature.project ?? 'default'),
            ),
          };
      const body = JSON.stringify(visible);
      answer = { body, etag: `"${createHash('sha256').update(body).digest('base64url')}"` };
      this.answers.set(scope, answer);
    }
    return answer;
  }

  private validate(request: IncomingMessage, response: ServerResponse): void {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_VALIDATE_BODY_BYTES) chunks.push(chunk);
    });
    request.on('end', () => {
      let asked: unknown;
      try {
        asked = JSON.parse(Buffer.concat(chunks).toString('utf8')).tokens;
      } catch {
        asked = undefined;
      }
      if (size > MAX_VALIDATE_BODY_BYTES || !Array.isArray(asked)) {
        response.writeHead(400).end();
        return;
      }
      const tokens = asked.flatMap((token) => {
        const known = typeof token === 'string' ? this.tokens.get(token) : undefined;
        return known === undefined ? [] : [known];
      });
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ tokens }));
    });
  }
}
