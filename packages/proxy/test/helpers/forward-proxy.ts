import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';

/**
 * A real forward HTTP proxy: absolute-URI requests (`GET http://host/path`) are forwarded to their
 * target, `CONNECT host:port` opens a TCP tunnel. Records both, so a test can tell which way
 * requests went.
 */
export class ForwardProxy {
  /** Absolute URIs of the requests forwarded. */
  readonly forwarded: string[] = [];
  /** `host:port` of every CONNECT tunnel opened. */
  readonly tunnels: string[] = [];
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();

  /** With `answerConnect: false`, a `CONNECT` is recorded and never answered (a stuck proxy). */
  constructor(private readonly options: { readonly answerConnect?: boolean } = {}) {}

  /** Connections open to or from the proxy (clients and tunnel targets). */
  get openConnections(): number {
    return this.sockets.size;
  }

  get url(): string {
    const address = this.server?.address() as AddressInfo | undefined;
    return `http://127.0.0.1:${address?.port ?? 0}`;
  }

  async start(): Promise<this> {
    const server = createServer((request, response) => this.forward(request, response));
    server.on('connection', (socket: Socket) => this.track(socket));
    server.on('connect', (request: IncomingMessage, client: Socket, head: Buffer) =>
      this.tunnel(request, client, head),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.server = server;
    return this;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (server === undefined) return;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private track(socket: Socket): void {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
  }

  private forward(request: IncomingMessage, response: ServerResponse): void {
    const target = request.url ?? '';
    if (!/^https?:\/\//.test(target)) {
      response.writeHead(400).end('absolute URI expected');
      return;
    }
    this.forwarded.push(target);
    const headers = { ...request.headers };
    delete headers['proxy-connection'];
    const outgoing = httpRequest(
      target,
      { method: request.method, headers, agent: false },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    outgoing.on('error', () => {
      if (!response.headersSent) response.writeHead(502);
      response.end();
    });
    request.pipe(outgoing);
  }

  private tunnel(request: IncomingMessage, client: Socket, head: Buffer): void {
    const authority = request.url ?? '';
    this.tunnels.push(authority);
    if (this.options.answerConnect === false) {
      // Read (and drop) what comes, and close when the client does (the server allows half-open).
      client.resume();
      client.on('end', () => client.destroy());
      return;
    }
    const separator = authority.lastIndexOf(':');
    const upstream = connect(Number(authority.slice(separator + 1)), authority.slice(0, separator));
    this.track(upstream);
    upstream.on('connect', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  }
}
