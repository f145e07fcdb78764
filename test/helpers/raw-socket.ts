import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { waitFor } from './wait.js';

/** A TCP connection a test writes bytes to by hand and whose answer it reads as text. */
export interface RawConnection {
  readonly socket: Socket;
  /** Everything received so far, as latin1 text. */
  received(): string;
  /** Whether the connection has closed (by either side). */
  closed(): boolean;
}

/** Connects to `port` on 127.0.0.1 from `localAddress` (any 127.x.y.z on Linux' loopback). */
export async function openRaw(port: number, localAddress = '127.0.0.1'): Promise<RawConnection> {
  const socket = connect({ port, host: '127.0.0.1', localAddress });
  let text = '';
  let isClosed = false;
  socket.on('data', (chunk: Buffer) => {
    text += chunk.toString('latin1');
  });
  // A reset (a refused connection) is a close too.
  socket.on('error', () => {});
  socket.on('close', () => {
    isClosed = true;
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('close', () => reject(new Error('closed before connecting')));
  });
  return { socket, received: () => text, closed: () => isClosed };
}

/** `GET path` on the open connection, kept alive; resolves with the answer's status code. */
export async function getOn(
  connection: RawConnection,
  path: string,
  headers: Record<string, string> = {},
): Promise<number> {
  const before = connection.received().length;
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  connection.socket.write(`GET ${path} HTTP/1.1\r\nHost: test\r\n${lines.join('')}\r\n`);
  let status: number | undefined;
  await waitFor(
    () => {
      const match = /^HTTP\/1\.1 (\d{3})/.exec(connection.received().slice(before));
      status = match === null ? undefined : Number(match[1]);
      return status !== undefined || connection.closed();
    },
    3000,
    `an answer to GET ${path}`,
  );
  if (status === undefined) throw new Error(`the connection closed without answering ${path}`);
  return status;
}

/**
 * Writes `text` one byte every `everyMs` until it is all sent, the connection closes or `limitMs`
 * has passed; resolves with whether the connection was closed by then.
 */
export async function trickle(
  connection: RawConnection,
  text: string,
  everyMs: number,
  limitMs: number,
): Promise<boolean> {
  const deadline = Date.now() + limitMs;
  for (let index = 0; index < text.length && Date.now() < deadline; index++) {
    if (connection.closed()) return true;
    connection.socket.write(text[index] as string);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
  return connection.closed();
}

/**
 * Asserts that a trickled request was cut: its connection closed within `limitMs`, after a 408
 * in the JSON error shape every other error of both services has.
 */
export async function assertCutAfterTimeout(
  connection: RawConnection,
  body: string,
  limitMs: number,
): Promise<void> {
  const closed = await trickle(connection, body, 50, limitMs);
  assert.ok(closed, `the trickled request still holds its connection after ${limitMs} ms`);
  const received = connection.received();
  assert.match(received, /^HTTP\/1\.1 408 /);
  const answer = JSON.parse(received.slice(received.indexOf('\r\n\r\n') + 4));
  assert.equal(answer.name, 'RequestTimeoutError');
  assert.deepEqual(answer.details, [{ message: answer.message }]);
}
