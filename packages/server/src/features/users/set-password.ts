import type { Actor } from '../../auth/actor.js';
import { endSessionsOf } from '../../auth/sessions.js';
import type { Transaction } from '../../db/database.js';
import { recordEvent } from '../events/event-store.js';
import { EVENT_TYPES } from '../events/event-types.js';
import { endPasswordLinks } from './password-links.js';
import { setPasswordHash } from './user-store.js';

/** A user's new password (already hashed), and who set it how. */
export interface PasswordChange {
  readonly userId: number;
  readonly passwordHash: string;
  readonly by: Pick<Actor, 'name' | 'userId'>;
  /** As the event records it: an Admin, the user themself, or a reset or welcome link. */
  readonly changedBy: 'admin' | 'self' | 'link';
  /** The session that set it, which stays signed in (the user's own change). */
  readonly keepSession?: string | undefined;
}

/**
 * Sets a password in the caller's transaction. Whoever knew the old one is signed out: every
 * session of the user ends but `keepSession`, and every password link of theirs stops working.
 * Records `user-password-changed` (never the password or its hash).
 */
export async function setPassword(tx: Transaction, change: PasswordChange): Promise<void> {
  const { userId, by, changedBy } = change;
  await setPasswordHash(tx, userId, change.passwordHash);
  await endSessionsOf(tx, userId, change.keepSession);
  await endPasswordLinks(tx, userId);
  recordEvent(tx, { type: EVENT_TYPES.userPasswordChanged, by, data: { id: userId, changedBy } });
}
