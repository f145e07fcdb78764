import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { addressShare } from './address-share.js';

/** At most one log line per this long about refused connections, however many there are. */
const LOG_EVERY_MS = 60_000;

export interface ConnectionCapOptions {
  /** Open connections accepted per socket address. */
  readonly maxPerAddress: number;
  /** Whether an address is exempt (a load balancer `trustProxy` names); none when `undefined`. */
  readonly exempt?: (address: string) => boolean;
  readonly log: { warn(obj: unknown, msg?: string): void };
  /** Clock of the log's pace, ms. */
  readonly now?: () => number;
}

/**
 * Open connections counted per socket address (`remoteAddress`, never a forwarded one: the
 * connection is counted before any request is read; IPv6 by /64, as every per-address cap). One
 * beyond the cap is destroyed at once, before Node's HTTP server sees it, so one address cannot
 * hold every socket the process may open, nor hold slow requests on all of them. Refusals are
 * counted (`refused`) and logged at most once a minute.
 */
export class ConnectionCap {
  /** Connections refused since the start. */
  refused = 0;
  private readonly open = new Map<string, number>();
  private unlogged = 0;
  private loggedAt = Number.NEGATIVE_INFINITY;
  private readonly now: () => number;

  constructor(private readonly options: ConnectionCapOptions) {
    this.now = options.now ?? Date.now;
  }

  /** Counts `socket` in, or destroys it and answers `false` when its address is at the cap. */
  admit(socket: Socket): boolean {
    const address = socket.remoteAddress;
    // Gone already (reset before this ran): nothing to count.
    if (address === undefined || this.options.exempt?.(address)) return true;
    const share = addressShare(address);
    const count = this.open.get(share) ?? 0;
    if (count >= this.options.maxPerAddress) {
      socket.destroy();
      this.noteRefusal(address);
      return false;
    }
    this.open.set(share, count + 1);
    socket.once('close', () => this.release(share));
    return true;
  }

  /** Open connections counted now for the share (`addressShare`) `address` is in. */
  openFrom(address: string): number {
    return this.open.get(addressShare(address)) ?? 0;
  }

  private release(share: string): void {
    const count = (this.open.get(share) ?? 1) - 1;
    if (count === 0) this.open.delete(share);
    else this.open.set(share, count);
  }

  private noteRefusal(address: string): void {
    this.refused++;
    this.unlogged++;
    const at = this.now();
    if (at - this.loggedAt < LOG_EVERY_MS) return;
    const max = this.options.maxPerAddress;
    this.options.log.warn(
      { address, refused: this.unlogged, maxConnectionsPerAddress: max },
      `refused ${this.unlogged} connection(s) from addresses that already had ${max} open (maxConnectionsPerAddress), the latest from ${address}; said at most once a minute`,
    );
    this.loggedAt = at;
    this.unlogged = 0;
  }
}

/**
 * Puts `cap` in front of every `connection` listener of `server` (Node's HTTP server, and any
 * front installed before), so a refused socket reaches none of them. Install it after those.
 */
export function installConnectionCap(server: Server, cap: ConnectionCap): void {
  const listeners = server.listeners('connection') as ((socket: Socket) => void)[];
  server.removeAllListeners('connection');
  server.on('connection', (socket: Socket) => {
    if (!cap.admit(socket)) return;
    for (const listener of listeners) listener.call(server, socket);
  });
}
