import { ApiError } from '../errors.js';

/** How many users of a thing a 409's message names; `details` names every one. */
const NAMED_IN_MESSAGE = 10;

/**
 * Refuses (409 `IN_USE`) to delete `what` while `users` use it: the message names the first ones
 * and how many more, `details` every one. Returns when nothing uses it.
 */
export function refuseWhileUsed(what: string, users: readonly string[], remedy: string): void {
  if (users.length === 0) return;
  const named = users.slice(0, NAMED_IN_MESSAGE).join(', ');
  const more =
    users.length > NAMED_IN_MESSAGE ? ` and ${users.length - NAMED_IN_MESSAGE} more` : '';
  throw new ApiError('IN_USE', `${what} is in use by ${named}${more}. ${remedy}`, [...users]);
}
