import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A stand-in upstream on a real port that a test can stop (connections refused) and start again on
 * the same port. Subclasses answer requests in `handle`.
 */
export abstract class UpstreamServer {
  private server: Server | undefined;
  private port = 0;

  protected abstract handle(request: IncomingMessage, response: ServerResponse): void;

  /** The API base URL the proxy is configured with (`flagsUrl`). */
  get url(): string {
    return `http://127.0.0.1:${this.port}/api`;
  }

  async start(port = 0): Promise<this> {
    const server = createServer((request, response) => this.handle(request, response));
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
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  async restart(): Promise<void> {
    await this.start(this.port);
  }
}
