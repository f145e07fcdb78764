import type { EventEmitter } from 'node:events';
import type { Unleash } from 'unleash-client';

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
