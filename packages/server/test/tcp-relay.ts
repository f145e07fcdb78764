import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP relay between flags-server and PostgreSQL that a test can cut and restore: the database
 * outage of issue 18 without stopping the shared PostgreSQL. While cut, every open connection
 * is reset and every new one is accepted and reset at once (what a server sees when a database
 * host restarts or a network path fails fast); `restore()` lets connections through again.
 */
export interface TcpRelay {
  /** `postgres://…` of the upstream URL with the relay's host and port. */
  readonly url: string;
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpRelay(upstreamUrl: string): Promise<TcpRelay> {
  const upstream = new URL(upstreamUrl);
  const target = { host: upstream.hostname, port: Number(upstream.port || 5432) };
  const open = new Set<Socket>();
  let cut = false;
  const track = (socket: Socket) => {
    open.add(socket);
    socket.on('close', () => open.delete(socket));
    // A reset is what this relay is for; the peer sees it, the test process must not crash.
    socket.on('error', () => {});
  };
  const server: Server = createServer((client) => {
    track(client);
    if (cut) {
      client.resetAndDestroy();
      return;
    }
    const server = connect(target);
    track(server);
    client.pipe(server);
    server.pipe(client);
    client.on('close', () => server.destroy());
    server.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  const url = new URL(upstreamUrl);
  url.hostname = '127.0.0.1';
  url.port = String(address.port);
  return {
    url: url.toString(),
    cut() {
      cut = true;
      for (const socket of open) socket.resetAndDestroy();
    },
    restore() {
      cut = false;
    },
    async close() {
      for (const socket of open) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
