import type { Socket } from 'node:net';
import { compile as compileAddresses } from '@fastify/proxy-addr';
import type { FastifyInstance } from 'fastify';
import { ProxyError } from '../errors.js';

type AddressTest = (address: string, hop: number) => boolean;

/**
 * The callers this proxy answers, by address (`allowList`, `denyList`: Unleash Edge's `ALLOW_LIST`
 * and `DENY_LIST`): an address on the deny list, or with an allow list one not on it, gets 403 on
 * every route. The address is the request's (`request.ip`: the forwarded one when `trustProxy`
 * trusts the sender). Entries are read as `trustProxy`'s are (`@fastify/proxy-addr`): addresses,
 * CIDR ranges, `loopback`, `linklocal`, `uniquelocal`; an IPv4-mapped IPv6 address matches its IPv4
 * entries.
 */
export class AddressFilter {
  private readonly allowed: AddressTest | undefined;
  private readonly denied: AddressTest | undefined;
  /** Verdicts per connection, for the evaluation front (its address is the socket's). */
  private readonly connections = new WeakMap<Socket, boolean>();

  constructor(allowList: readonly string[], denyList: readonly string[]) {
    this.allowed = allowList.length === 0 ? undefined : compileAddresses([...allowList]);
    this.denied = denyList.length === 0 ? undefined : compileAddresses([...denyList]);
  }

  /** Whether a request from `address` is answered. */
  allows(address: string | undefined): boolean {
    if (address === undefined) return false;
    if (this.denied?.(address, 0)) return false;
    return this.allowed === undefined || this.allowed(address, 0);
  }

  /** `allows` for the peer address of `socket`, decided once per connection. */
  allowsConnection(socket: Socket): boolean {
    let verdict = this.connections.get(socket);
    if (verdict === undefined) {
      verdict = this.allows(socket.remoteAddress);
      this.connections.set(socket, verdict);
    }
    return verdict;
  }
}

/** The filter of `allowList` and `denyList`, or `undefined` when both are empty. */
export function addressFilterFor(config: {
  readonly allowList: readonly string[];
  readonly denyList: readonly string[];
}): AddressFilter | undefined {
  return config.allowList.length === 0 && config.denyList.length === 0
    ? undefined
    : new AddressFilter(config.allowList, config.denyList);
}

/** Answers 403 `ADDRESS_NOT_ALLOWED` to every request `filter` refuses, before anything else. */
export function installAddressFilter(app: FastifyInstance, filter: AddressFilter): void {
  app.addHook('onRequest', function addressFilter(request, _reply, done) {
    done(filter.allows(request.ip) ? undefined : new ProxyError('ADDRESS_NOT_ALLOWED'));
  });
}
