import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';

/** A key and certificate to serve HTTPS with. */
export interface TlsMaterial {
  readonly key: string | Buffer;
  readonly cert: string | Buffer;
}

/**
 * A stand-in upstream on a real port that a test can stop (connections refused) and start again on
 * the same port. Subclasses answer requests in `handle`. With `tls` it serves HTTPS.
 */
export abstract class UpstreamServer {
  private server: Server | undefined;
  private port = 0;
  private tls: TlsMaterial | undefined;
  private readonly sockets = new Set<Socket>();

  protected abstract handle(request: IncomingMessage, response: ServerResponse): void;

  /** The API base URL the proxy is configured with (`flagsUrl`). */
  get url(): string {
    return `${this.tls === undefined ? 'http' : 'https'}://127.0.0.1:${this.port}/api`;
  }

  /** Connections currently open to this server (kept-alive ones included). */
  get openConnections(): number {
    return this.sockets.size;
  }

  /** Serves HTTPS with this key and certificate from the next `start()`. */
  useTls(material: TlsMaterial): this {
    this.tls = material;
    return this;
  }

  async start(port = 0): Promise<this> {
    const handler = (request: IncomingMessage, response: ServerResponse) =>
      this.handle(request, response);
    const server: Server =
      this.tls === undefined ? createServer(handler) : createTlsServer(this.tls, handler);
    // TCP connections, also those whose TLS handshake fails.
    server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
    return this;
  }

  /** Stops answering (connections refused) until `start(samePort)`. */
  async stop(): Promise<void> {
    const server = this.server;
    if (server === undefined) return;
    this.server = undefined;
    server.closeAllConnections();
    // Also connections without a request yet (an HTTPS handshake in progress or failed).
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  async restart(): Promise<void> {
    await this.start(this.port);
  }
}
