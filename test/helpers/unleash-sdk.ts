import type { EventEmitter } from 'node:events';
import { inspect } from 'node:util';
import { Agent, fetch as undiciFetch } from 'undici';
import type { Unleash } from 'unleash-client';
import { InMemoryStorageProvider, UnleashClient } from 'unleash-proxy-client';

/**
 * Stops an `unleash-client` for good. Its `destroy()` removes every listener of the SDK's
 * repository, but a poll already under way still ends by emitting `error` there when the server
 * it asked has since closed; with no listener left that throws, as an unhandled rejection in the
 * test that happens to be running. A listener put back after `destroy()` takes that last error.
 */
export function stopSdk(client: Unleash | undefined): void {
  if (!client) return;
  client.destroy();
  (client as unknown as { repository: EventEmitter }).repository.on('error', () => {});
}

/**
 * `unleash-proxy-client` with no refresh timer, started, for a test that sets one context after
 * another and reads the answers; `stop` ends it and closes its connections.
 *
 * Its requests go through connections of its own: a connection left in the shared pool by an
 * earlier test can be closed by its server (keep-alive time out) just as the start's one fetch
 * reuses it, and an SDK whose first fetch failed fetches again only on its timer, so with none
 * every `updateContext` waits for "ready" for good. A start that got no answer throws, naming the
 * SDK's error, instead.
 */
export async function startFrontendSdk(options: {
  readonly url: string;
  readonly clientKey: string;
  readonly appName: string;
}): Promise<{ readonly client: UnleashClient; stop(): Promise<void> }> {
  const agent = new Agent();
  const client = new UnleashClient({
    ...options,
    refreshInterval: 0,
    disableMetrics: true,
    storageProvider: new InMemoryStorageProvider(),
    fetch: (input: string, init?: RequestInit) =>
      undiciFetch(input, { ...(init as object), dispatcher: agent }),
  });
  const stop = async () => {
    client.stop();
    await agent.close();
  };
  await client.start();
  if (!client.isReady()) {
    await stop();
    throw new Error(
      `unleash-proxy-client got no first answer from ${options.url}: ${inspect(client.getError())}`,
    );
  }
  return { client, stop };
}
