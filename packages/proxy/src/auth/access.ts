import type { IncomingHttpHeaders } from 'node:http';
import type { AuthorizeHook, CompiledState } from '@flags/serving';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ERROR_CONTENT_TYPE, type ErrorCode, errorBody, ProxyError } from '../errors.js';

export type { AuthorizeHook };

import type { Environment, Environments } from '../sync/environments.js';
import { KeyTable } from './client-keys.js';
import { replyUnauthorized } from './require-key.js';
import type { TokenStatus, TokenValidator } from './token-validator.js';
import {
  parseUnleashToken,
  projectsOf,
  sameProjects,
  type TokenInfo,
  type TokenType,
} from './unleash-token.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Who is asking: set by the route's `authorize` hook before the handler runs. */
    access: Access;
  }
}

/** What a key or token lets a request do. */
export interface Access {
  /** The key or token presented (each access is made for one). */
  readonly key: string;
  readonly type: TokenType;
  readonly environment: Environment;
  /** `['*']`: every project. */
  readonly projects: readonly string[];
  /** A configured client key (public: it ships in every page), not a token. */
  readonly clientKey: boolean;
}

/** What configuration, or the upstream's validation, grants one key. */
interface Grant {
  readonly key: string;
  readonly type: TokenType;
  /** `undefined`: the default environment (the first startup token's). */
  readonly environment: string | undefined;
  readonly projects: readonly string[];
  readonly clientKey: boolean;
  /** A token the upstream confirmed (`/edge/validate`), not a configured key. */
  readonly validated: boolean;
}

/** Which keys a route takes: `any` for the usage reports both kinds of SDK send. */
export type Accepts = TokenType | 'any';

/**
 * How refusals are answered: `legacy` (`/proxy`, OFREP) as Unleash Proxy, 401 `Unauthorized` in
 * plain text for any key problem; `edge` (`/api`) as Unleash Edge, 401 without a usable key and 403
 * for a refused one, in our JSON error shape (Edge sends no body; SDKs read only the status).
 */
export type RefusalStyle = 'legacy' | 'edge';

/** Reads the presented key of a request (a header, or one of several for OFREP). */
export type KeyReader = (request: { readonly headers: IncomingHttpHeaders }) => string | undefined;

export interface AuthorizerOptions {
  readonly environments: Environments;
  readonly validator: TokenValidator | undefined;
  /** Plain client keys (`clientKeys`, `proxySecrets`): frontend access to the default environment. */
  readonly clientKeys: readonly string[];
  /** `pretrustedTokens`: frontend tokens, or `secret@environment`. */
  readonly pretrustedTokens: readonly string[];
  /** Plain keys of server-side SDKs (`expServerSideSdkConfig.tokens`): client access, default environment. */
  readonly serverSideTokens: readonly string[];
  /** The startup tokens: client access to their environments. */
  readonly startupTokens: readonly string[];
  /** Only the startup tokens' environments are served. */
  readonly strict: boolean;
  /** How long a request waits for an environment's first sync, ms. */
  readonly firstSyncWaitMs: number;
}

/** The grant of a pretrusted entry: a frontend token, or `secret@environment`. */
function pretrusted(entry: string): readonly [string, Grant] {
  const parsed = parseUnleashToken(entry);
  if (parsed !== undefined) {
    const projects = projectsOf(parsed) ?? ['*'];
    return [
      entry,
      {
        key: entry,
        type: 'frontend',
        environment: parsed.environment,
        projects,
        clientKey: false,
        validated: false,
      },
    ];
  }
  const at = entry.lastIndexOf('@');
  if (at <= 0) {
    return [
      entry,
      {
        key: entry,
        type: 'frontend',
        environment: undefined,
        projects: ['*'],
        clientKey: true,
        validated: false,
      },
    ];
  }
  const key = entry.slice(0, at);
  const environment = entry.slice(at + 1);
  const grant: Grant = {
    key,
    type: 'frontend',
    environment,
    projects: ['*'],
    clientKey: true,
    validated: false,
  };
  return [key, grant];
}

/** What `/internal-backstage/tokens` lists of `pretrustedTokens` entries (Edge's `Trusted` tokens). */
export function pretrustedListing(entries: readonly string[]): Array<{
  readonly token: string;
  readonly environment: string | undefined;
  readonly projects: readonly string[];
}> {
  return entries.map((entry) => {
    const grant = pretrusted(entry)[1];
    return { token: grant.key, environment: grant.environment, projects: grant.projects };
  });
}

/** The keys callers present for `pretrustedTokens` entries (`secret@environment` → `secret`). */
export function pretrustedKeys(entries: readonly string[]): string[] {
  return entries.map((entry) => pretrusted(entry)[0]);
}

/** The grant of a startup token: its environment and projects (`[]` ones are validated instead). */
function startup(token: string): Array<readonly [string, Grant]> {
  const parsed = parseUnleashToken(token);
  const grant = (environment: string | undefined, projects: readonly string[]): Grant => ({
    key: token,
    type: 'client',
    environment,
    projects,
    clientKey: false,
    validated: false,
  });
  if (parsed === undefined) return [[token, grant(undefined, ['*'])]];
  const projects = projectsOf(parsed);
  if (projects === undefined) return [];
  return [[token, grant(parsed.environment, projects)]];
}

/**
 * Decides who a request is and which snapshot answers it. Configured keys are found in constant
 * time (`KeyTable`); Unleash-format tokens are validated upstream (`TokenValidator`, cached), and a
 * validated client token of an environment not synced yet starts syncing it unless `strict`.
 */
export class Authorizer {
  private readonly frontend: KeyTable<Grant>;
  private readonly client: KeyTable<Grant>;
  /** The grant of each validated token, made once (the hot path allocates nothing per request). */
  private readonly grants = new WeakMap<TokenInfo, Grant>();
  /** The access of each grant, made once per environment it resolves to. */
  private readonly accesses = new WeakMap<Grant, Access>();

  constructor(private readonly options: AuthorizerOptions) {
    this.frontend = new KeyTable([
      ...options.clientKeys.map((key): readonly [string, Grant] => [
        key,
        {
          key,
          type: 'frontend',
          environment: undefined,
          projects: ['*'],
          clientKey: true,
          validated: false,
        },
      ]),
      ...options.pretrustedTokens.map(pretrusted),
    ]);
    this.client = new KeyTable([
      ...options.serverSideTokens.map((key): readonly [string, Grant] => [
        key,
        {
          key,
          type: 'client',
          environment: undefined,
          projects: ['*'],
          clientKey: false,
          validated: false,
        },
      ]),
      ...options.startupTokens.flatMap(startup),
    ]);
  }

  /** An `onRequest` hook admitting keys of `accepts`, answering refusals in `style`. */
  hook(accepts: Accepts, style: RefusalStyle, read: KeyReader): AuthorizeHook {
    return (request, reply, done) => {
      const key = read(request);
      if (key === undefined || key === '') {
        refuse(reply, style, 'NO_TOKEN');
        return;
      }
      const grant = this.configured(key, accepts);
      if (grant !== undefined) {
        this.admit(request, reply, done, style, accepts, key, grant);
        return;
      }
      const validator = this.options.validator;
      if (validator === undefined || parseUnleashToken(key) === undefined) {
        refuse(reply, style, 'INVALID_TOKEN');
        return;
      }
      const status = validator.validate(key);
      if (status instanceof Promise) {
        status.then(
          (known) => this.checked(request, reply, done, style, accepts, key, known),
          () => refuse(reply, style, 'TOKEN_NOT_CHECKED'),
        );
      } else this.checked(request, reply, done, style, accepts, key, status);
    };
  }

  /**
   * The snapshot a frontend route answers `key` from, when the route's hook would admit it at once
   * and without side effects: a configured key, or a token the validator already confirmed, of
   * the frontend kind, for an environment that is synced. `undefined` in every other case (no such
   * key, a refusal, a token to ask the upstream about, an environment to wait for): then the
   * route's hook decides and answers. For the evaluation front (`http/evaluation-front.ts`).
   */
  frontendServed(key: string): CompiledState | undefined {
    const grant = this.knownGrant(key, 'frontend');
    // A frontend grant never starts syncing an environment (`environmentOf`).
    if (grant?.type !== 'frontend') return undefined;
    return this.environmentOf(key, grant)?.state.forProjects(grant.projects);
  }

  /**
   * Whether `key` still grants what a stream opened with it reads: a `type` key, for `environment`
   * (still the one served under its name) and exactly `projects`. A token counts as its last
   * validation says; no one is asked. False once the upstream revoked or narrowed the token, or
   * the environment was pruned.
   */
  holds(
    key: string,
    type: TokenType,
    environment: Environment,
    projects: readonly string[],
  ): boolean {
    const grant = this.knownGrant(key, type);
    if (grant === undefined || grant.type !== type) return false;
    const { environments } = this.options;
    const served =
      grant.environment === undefined ? environments.default : environments.get(grant.environment);
    return served === environment && sameProjects(grant.projects, projects);
  }

  /** The grant of a configured key, or of a token the validator has confirmed (asking no one). */
  private knownGrant(key: string, accepts: Accepts): Grant | undefined {
    const grant = this.configured(key, accepts);
    if (grant !== undefined) return grant;
    const status = this.options.validator?.known(key);
    return status === undefined || typeof status === 'string' ? undefined : this.grantOf(status);
  }

  /** A configured key's grant; the kind a route does not take is looked up too (403, not 401). */
  private configured(key: string, accepts: Accepts): Grant | undefined {
    if (accepts === 'client') return this.client.find(key) ?? this.frontend.find(key);
    return this.frontend.find(key) ?? this.client.find(key);
  }

  private checked(
    request: FastifyRequest,
    reply: FastifyReply,
    done: () => void,
    style: RefusalStyle,
    accepts: Accepts,
    key: string,
    status: TokenStatus,
  ): void {
    if (status === 'unknown') refuse(reply, style, 'TOKEN_NOT_CHECKED');
    else if (status === 'invalid') refuse(reply, style, 'INVALID_TOKEN');
    else this.admit(request, reply, done, style, accepts, key, this.grantOf(status));
  }

  /** The grant of a validated token, made once. */
  private grantOf(status: TokenInfo): Grant {
    let grant = this.grants.get(status);
    if (grant === undefined) {
      grant = {
        key: status.token,
        type: status.type,
        environment: status.environment,
        projects: status.projects,
        clientKey: false,
        validated: true,
      };
      this.grants.set(status, grant);
    }
    return grant;
  }

  private admit(
    request: FastifyRequest,
    reply: FastifyReply,
    done: () => void,
    style: RefusalStyle,
    accepts: Accepts,
    key: string,
    grant: Grant,
  ): void {
    if (accepts !== 'any' && grant.type !== accepts) {
      refuse(reply, style, 'WRONG_TOKEN_TYPE');
      return;
    }
    const environment = this.environmentOf(key, grant);
    if (environment === undefined) {
      refuse(reply, 'edge', 'ENVIRONMENT_NOT_SERVED', [
        `The token's environment "${grant.environment}" is not synced by this proxy.`,
      ]);
      return;
    }
    let access = this.accesses.get(grant);
    if (access?.environment !== environment) {
      access = {
        key: grant.key,
        type: grant.type,
        environment,
        projects: grant.projects,
        clientKey: grant.clientKey,
      };
      this.accesses.set(grant, access);
    }
    request.access = access;
    // A validated client token may read projects that no feed of its environment has fetched
    // (a `*` token where a project token syncs): its answer would lack flags. Its own feed (which
    // `environmentOf` started) must fetch first; with strict tokens there is none: 403, as Edge.
    const partial =
      grant.validated && grant.type === 'client' && !environment.syncs(grant.projects);
    if (partial && !environment.reads(grant.projects)) {
      refuse(reply, 'edge', 'ENVIRONMENT_NOT_SERVED', [
        `The token reads projects of "${environment.name}" that this proxy does not sync (strictTokens).`,
      ]);
      return;
    }
    const served = partial ? undefined : environment.state.forProjects(grant.projects);
    if (served !== undefined) {
      request.served = served;
      done();
      return;
    }
    if (environment.refused) {
      refuse(reply, 'edge', 'ENVIRONMENT_NOT_READY', [
        `The upstream refuses this proxy's token for the environment "${environment.name}": it has no flags to serve.`,
      ]);
      return;
    }
    // An environment, or a client token's projects, that started syncing just now: wait for it.
    const ready = partial ? environment.synced(grant.projects) : environment.ready;
    waitFor(ready, this.options.firstSyncWaitMs).then((synced) => {
      const state = synced ? environment.state.forProjects(grant.projects) : undefined;
      if (state === undefined) {
        refuse(reply, 'edge', 'ENVIRONMENT_NOT_READY', [
          `The environment "${environment.name}" has not been synced from the upstream yet.`,
        ]);
        return;
      }
      request.served = state;
      done();
    });
  }

  /**
   * The environment a grant is served from. A client token of an environment (or of projects) not
   * synced yet starts syncing it, unless tokens are strict; frontend tokens never do (there is no
   * client token to sync with).
   */
  private environmentOf(key: string, grant: Grant): Environment | undefined {
    const { environments, strict } = this.options;
    if (grant.environment === undefined) return environments.default;
    const environment = environments.get(grant.environment);
    if (grant.type !== 'client' || strict || grant.clientKey) return environment;
    if (environment === undefined) return environments.add(grant.environment, key, grant.projects);
    environment.addToken(key, grant.projects);
    return environment;
  }
}

function waitFor(ready: Promise<void>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    timer.unref();
    void ready.then(() => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

function refuse(
  reply: FastifyReply,
  style: RefusalStyle,
  code: ErrorCode,
  details?: readonly string[],
): void {
  if (
    style === 'legacy' &&
    (code === 'NO_TOKEN' ||
      code === 'TOKEN_NOT_CHECKED' ||
      code === 'INVALID_TOKEN' ||
      code === 'WRONG_TOKEN_TYPE')
  ) {
    replyUnauthorized(reply);
    return;
  }
  const error = new ProxyError(code, details);
  void reply.code(error.status).type(ERROR_CONTENT_TYPE).send(errorBody(error));
}
