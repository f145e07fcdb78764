import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * How a cut looks to flags-server: `reset` — every open connection is reset and new ones are
 * reset on accept (a database host restarting, a path failing fast); `drop` — nothing passes
 * and nothing is answered, open connections hang and new ones are accepted and never answered
 * (packets dropped by a partition), until `restore()` closes them.
 */
export type CutMode = 'reset' | 'drop';

/**
 * A TCP relay between flags-server and PostgreSQL that a test can cut and restore: the database
 * outage of issue 18 without stopping the shared PostgreSQL.
 */
export interface TcpRelay {
  /** `postgres://…` of the upstream URL with the relay's host and port. */
  readonly url: string;
  cut(mode?: CutMode): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpRelay(upstreamUrl: string): Promise<TcpRelay> {
  const upstream = new URL(upstreamUrl);
  const target = { host: upstream.hostname, port: Number(upstream.port || 5432) };
  const open = new Set<Socket>();
  let cut: CutMode | undefined;
  const track = (socket: Socket) => {
    open.add(socket);
    socket.on('close', () => open.delete(socket));
    // A reset is what this relay is for; the peer sees it, the test process must not crash.
    socket.on('error', () => {});
  };
  const relay: Server = createServer((client) => {
    track(client);
    if (cut === 'reset') return void client.resetAndDestroy();
    if (cut === 'drop') return void client.pause();
    const server = connect(target);
    track(server);
    client.pipe(server);
    server.pipe(client);
    client.on('close', () => server.destroy());
    server.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  const address = relay.address() as { port: number };
  const url = new URL(upstreamUrl);
  url.hostname = '127.0.0.1';
  url.port = String(address.port);
  return {
    url: url.toString(),
    cut(mode = 'reset') {
      cut = mode;
      for (const socket of open) {
        if (mode === 'reset') socket.resetAndDestroy();
        else {
          socket.unpipe();
          socket.pause();
        }
      }
    },
    restore() {
      // Connections that hung through a drop do not come back: closed, as a peer's timeout would.
      if (cut === 'drop') for (const socket of open) socket.resetAndDestroy();
      cut = undefined;
    },
    async close() {
      for (const socket of open) socket.destroy();
      await new Promise<void>((resolve) => relay.close(() => resolve()));
    },
  };
}
