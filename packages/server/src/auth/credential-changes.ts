/**
 * Tells whoever holds credentials open that sessions, tokens or roles may have changed (a logout,
 * a deleted or demoted user, a changed password), so they check them again at once instead of at
 * their next periodic check. In this process only: other servers on the database see the change
 * at their own next check. One per app.
 */
export class CredentialChanges {
  private readonly listeners = new Set<() => void>();

  /** Calls `listener` after each change; returns what unsubscribes it. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  changed(): void {
    for (const listener of this.listeners) listener();
  }
}
