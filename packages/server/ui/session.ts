/** Who is signed in (`GET /api/admin/user`), asked again when what they may do may have changed. */
import { useCallback, useRef } from 'preact/hooks';
import { get, ME_PATH } from './api.js';
import type { Session } from './kit.js';
import type { Me } from './types.js';

export function sessionOf(me: Me): Session {
  const permissions = new Set(me.permissions.map((entry) => entry.permission));
  const role = permissions.has('ADMIN')
    ? 'admin'
    : permissions.has('UPDATE_FEATURE')
      ? 'editor'
      : 'viewer';
  return {
    name: me.user.name || me.user.username || me.user.email || 'signed in',
    role,
    canEdit: role !== 'viewer',
  };
}

/** `next`, or `current` when it says the same (the page then renders nothing again). */
export const keptSession = (current: Session, next: Session): Session =>
  current.name === next.name && current.role === next.role ? current : next;

/**
 * A function that asks again who is signed in and hands the answer to `apply`: one request at a
 * time, and a call while one runs asks once more after it (that one may have read the role from
 * before the change). A failure is left to `api` (a 401 shows the login page) and otherwise
 * changes nothing: the page keeps what it knew.
 */
export function useSessionRefresh(apply: (session: Session) => void): () => void {
  const latest = useRef(apply);
  latest.current = apply;
  const state = useRef({ running: false, again: false });
  return useCallback(() => {
    const current = state.current;
    if (current.running) {
      current.again = true;
      return;
    }
    current.running = true;
    const ask = (): void => {
      current.again = false;
      get<Me>(ME_PATH)
        .then(
          (me) => latest.current(sessionOf(me)),
          () => {},
        )
        .finally(() => {
          if (current.again) ask();
          else current.running = false;
        });
    };
    ask();
  }, []);
}
