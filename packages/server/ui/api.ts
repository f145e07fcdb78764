/** The admin API, as this page's signed-in person: same-origin fetch with the session cookie. */

/** An answer other than 2xx, with the server's error message (DESIGN.md's error shape). */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** The error's code (`BAD_DATA`, `IN_USE`, …), when the server sent one. */
    readonly code?: string,
    /** Every detail the server gave (a 409 `IN_USE` names each user; a 400 each bad field). */
    readonly details: readonly ErrorDetail[] = [],
  ) {
    super(message);
  }
}

/** One entry of an error's `details`; `path` names the field when the server says which. */
export interface ErrorDetail {
  readonly message: string;
  readonly path?: string;
}

/** Told of every 401 answer: the session ended (expired, logged out elsewhere, user deleted). */
let onUnauthorized: (() => void) | undefined;

/** Who hears of a 401 answer (the app, which then shows the login page). */
export function whenUnauthorized(listener: () => void): void {
  onUnauthorized = listener;
}

/** Who is signed in, with their permissions. */
export const ME_PATH = '/api/admin/user';

/** Told of every 403 answer: the person's role may have changed since the page learnt it. */
let onForbidden: (() => void) | undefined;

/**
 * Who hears of a 403 answer (the app, which asks again who is signed in). Not of one to
 * `ME_PATH` itself, which would only ask again.
 */
export function whenForbidden(listener: () => void): void {
  onForbidden = listener;
}

export async function api<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(path, {
    method,
    credentials: 'same-origin',
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  if (!response.ok) {
    let message = `${method} ${path}: ${response.status}`;
    let code: string | undefined;
    let details: ErrorDetail[] = [];
    try {
      const error = JSON.parse(text) as { code?: string; message?: string; details?: unknown };
      details = Array.isArray(error.details)
        ? (error.details as Partial<ErrorDetail>[]).filter(
            (detail): detail is ErrorDetail => typeof detail?.message === 'string',
          )
        : [];
      code = error.code;
      // A refusal of something in use says why in its message; its details only list the users.
      message =
        (code === 'IN_USE' ? error.message : (details[0]?.message ?? error.message)) ?? message;
    } catch {
      // Not JSON: the status says enough.
    }
    if (response.status === 401) onUnauthorized?.();
    if (response.status === 403 && path !== ME_PATH) onForbidden?.();
    throw new ApiFailure(response.status, message, code, details);
  }
  return (text ? JSON.parse(text) : undefined) as T;
}

export const get = <T>(path: string) => api<T>('GET', path);

/** A query string from the set values of `params` (arrays repeat the key). */
export function query(params: Record<string, string | number | undefined>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined && value !== '') search.append(key, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : '';
}

export const enc = encodeURIComponent;

export const flagPath = (project: string, feature: string) =>
  `/api/admin/projects/${enc(project)}/features/${enc(feature)}`;

export const envPath = (project: string, feature: string, environment: string) =>
  `${flagPath(project, feature)}/environments/${enc(environment)}`;
