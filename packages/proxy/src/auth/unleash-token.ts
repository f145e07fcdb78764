/**
 * Unleash-format API tokens: `<project>:<environment>.<secret>`, where the project part is a project
 * name, `*` (every project) or `[]` (several projects, which only the upstream can name).
 */
export interface ParsedToken {
  /** `*`, `[]` or one project name, as written in the token. */
  readonly projects: string;
  readonly environment: string;
}

/** What a token may do at the proxy. `backend` tokens are `client` tokens. */
export type TokenType = 'frontend' | 'client';

/** A token the upstream confirmed (`POST /edge/validate`), or that the configuration vouches for. */
export interface TokenInfo {
  readonly token: string;
  readonly type: TokenType;
  readonly environment: string;
  /** `['*']`: every project. */
  readonly projects: readonly string[];
}

/**
 * The project and environment an Unleash-format token names, or `undefined` for any other string
 * (a plain client key). The environment ends at the first `.` after the `:`, as Unleash and Edge
 * read it.
 */
export function parseUnleashToken(raw: string): ParsedToken | undefined {
  const colon = raw.indexOf(':');
  if (colon <= 0) return undefined;
  const dot = raw.indexOf('.', colon + 1);
  if (dot <= colon + 1 || dot === raw.length - 1) return undefined;
  const projects = raw.slice(0, colon);
  const environment = raw.slice(colon + 1, dot);
  if (/[\s:]/.test(projects) || /\s/.test(environment)) return undefined;
  return { projects, environment };
}

/** `client`, `backend` (any case) → `client`; `frontend` → `frontend`; anything else (admin) → none. */
export function tokenType(raw: unknown): TokenType | undefined {
  if (typeof raw !== 'string') return undefined;
  const type = raw.toLowerCase();
  if (type === 'client' || type === 'backend') return 'client';
  if (type === 'frontend') return 'frontend';
  return undefined;
}

/** The projects a token's own text grants: `['*']`, one name, or none known (`[]`: ask upstream). */
export function projectsOf(parsed: ParsedToken): readonly string[] | undefined {
  return parsed.projects === '[]' ? undefined : [parsed.projects];
}

/** Whether two project lists are the same, in the same order (validated lists are sorted). */
export function sameProjects(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((project, i) => project === b[i]);
}

/** Whether `projects` covers every project. */
export function allProjects(projects: readonly string[]): boolean {
  return projects.includes('*');
}

/**
 * A token as `/internal-backstage/tokens` and logs show it: the part after the dot masked, as Edge
 * does, so a listing never hands out a working secret.
 */
export function anonymizeToken(token: string): string {
  const dot = token.indexOf('.');
  const secret = dot === -1 ? token : token.slice(dot + 1);
  const shown = secret.length > 12 ? `${secret.slice(0, 4)}…${secret.slice(-4)}` : '****';
  return dot === -1 ? shown : `${token.slice(0, dot + 1)}${shown}`;
}

/**
 * A token as Unleash Edge 20 lists it (`anonymize_token`, `unleash-edge-types/src/tokens.rs`): of
 * `<project>:<environment>.<hash>` the hash's first and last six characters around `****`; of a
 * versioned `<project>:<environment>.<version>_<selector>_<secret>` everything but the secret. Any
 * other text (a plain client key, a hash too short to cut so), which Edge shows unchanged, is masked
 * as `anonymizeToken` masks it: a listing never hands out a working secret.
 */
export function edgeAnonymizedToken(token: string): string {
  const parts = token.split(/[:._]/);
  if (parts.length === 3) {
    const [project, environment, hash] = parts as [string, string, string];
    if (hash.length >= 18)
      return `${project}:${environment}.${hash.slice(0, 6)}****${hash.slice(-6)}`;
  } else if (parts.length === 5) {
    const [project, environment, version, selector] = parts as [string, string, string, string];
    return `${project}:${environment}.${version}_${selector}`;
  }
  return anonymizeToken(token);
}
