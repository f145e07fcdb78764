import { setTimeout as sleep } from 'node:timers/promises';
import { hashSecret } from '../auth/secrets.js';
import {
  type ApiTokenRecord,
  type Constraint,
  emptyRecords,
  type FlagEnvironment,
  type FlagRecord,
  type FlagStrategy,
  isoTime,
  type LegalValue,
  normalConstraint,
  type SourceInstance,
  userKey,
} from './records.js';

/** A problem the operator has to fix before the copy can run: the message says what and how. */
export class MigrateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MigrateError';
  }
}

/** How long one request to unleash-server may take. */
const REQUEST_TIMEOUT_MS = 60_000;
/** How often a request refused with 429 (too many requests) is made. */
const MAX_ATTEMPTS = 10;
/** Flags asked for per export request. */
const BATCH = 500;
/** Flags per search page: unleash-server answers at most 100 (and 50 when asked for more). */
const PAGE = 100;

type Json = Record<string, unknown>;

/**
 * The Admin API of one unleash-server, with an Admin's token. Every answer other than a 2xx is a
 * `MigrateError` naming the request and what to do.
 */
export class UnleashApi {
  readonly base: URL;

  constructor(
    url: string,
    private readonly token: string,
  ) {
    let base: URL;
    try {
      base = new URL(url);
    } catch {
      throw new MigrateError(`--url "${url}" is not a URL (try http://unleash.example.com:4242)`);
    }
    if (base.protocol !== 'http:' && base.protocol !== 'https:') {
      throw new MigrateError(`--url "${url}" must start with http:// or https://`);
    }
    // unleash-server's own base path (`/unleash`) is kept; `/api` is added to it.
    base.pathname = base.pathname.replace(/\/+$/, '').replace(/\/api$/, '');
    this.base = base;
  }

  /** `path` under the base (`/api/admin/...`). */
  url(path: string): string {
    return `${this.base.href.replace(/\/$/, '')}${path}`;
  }

  get<T = Json>(path: string): Promise<T> {
    return this.request<T>('GET', path);
  }

  post<T = Json>(path: string, body: unknown): Promise<T> {
    return this.request<T>('POST', path, body);
  }

  private async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    // unleash-server limits some admin routes per minute: a 429 waits as long as it says and
    // asks again.
    for (let attempt = 1; ; attempt++) {
      const response = await this.send(method, path, body);
      if (response.status !== 429 || attempt === MAX_ATTEMPTS)
        return this.read<T>(method, path, response);
      await response.arrayBuffer();
      const seconds = Number(response.headers.get('retry-after'));
      await sleep(
        Number.isFinite(seconds) && seconds > 0 ? Math.min(seconds, 60) * 1000 : attempt * 1000,
      );
    }
  }

  private async send(method: string, path: string, body?: unknown): Promise<Response> {
    try {
      return await fetch(this.url(path), {
        method,
        headers: {
          authorization: this.token,
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      const why = cause?.code ?? cause?.message ?? (error as Error).message;
      throw new MigrateError(
        `cannot reach unleash-server at ${this.base.href} (${why}); check --url and that it is running`,
      );
    }
  }

  private async read<T>(method: string, path: string, response: Response): Promise<T> {
    const text = await response.text();
    if (response.status === 401) {
      throw new MigrateError(
        `unleash-server at ${this.base.href} refused the token (401): give an admin API token or an Admin's personal access token with --token`,
      );
    }
    if (response.status === 403) {
      throw new MigrateError(
        `unleash-server refused ${method} ${path} to this token (403): it must be an admin API token or the personal access token of a user with the Admin root role`,
      );
    }
    if (response.status === 404) {
      throw new MigrateError(
        `unleash-server at ${this.base.href} has no ${method} ${path} (404): the copy needs unleash-server 6, 7 or 8, or --url does not point at unleash-server`,
      );
    }
    if (response.status < 200 || response.status > 299) {
      throw new MigrateError(
        `unleash-server answered ${method} ${path} with ${response.status}: ${text.slice(0, 300)}`,
      );
    }
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new MigrateError(
        `unleash-server answered ${method} ${path} with something other than JSON; does --url point at unleash-server?`,
      );
    }
  }
}

const text = (value: unknown): string | null =>
  value === undefined || value === null ? null : String(value);

const stringParameters = (parameters: unknown): Record<string, string> => {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries((parameters ?? {}) as Json)) out[key] = String(value);
  return out;
};

const legalValues = (raw: unknown): LegalValue[] =>
  ((raw ?? []) as Json[]).map((entry) => ({
    value: String(entry.value),
    ...(entry.description ? { description: String(entry.description) } : {}),
  }));

/**
 * Reads everything the copy takes from unleash-server: the Admin API answers described in
 * docs/migrate-from-unleash-server.md, each a request (flags in batches of `BATCH`).
 * `beforeReading` is asked once the instance is known (its version and id), before the long read:
 * a check that can refuse the command there saves the operator the read.
 */
export async function readUnleash(
  api: UnleashApi,
  beforeReading: (instanceId: string | undefined) => Promise<void> = async () => {},
): Promise<SourceInstance> {
  const notes: string[] = [];
  const records = emptyRecords();

  // An Admin-only read first: a token that is not an Admin's stops here, before anything else.
  const userAdmin = await api.get<{ users: Json[]; rootRoles?: Json[] }>('/api/admin/user-admin');
  const uiConfig = await api.get<{
    version?: string;
    versionInfo?: { current?: { oss?: string }; instanceId?: string };
  }>('/api/admin/ui-config');
  const version = uiConfig.versionInfo?.current?.oss ?? uiConfig.version ?? 'unknown';
  const major = Number(version.split('.')[0]);
  if (Number.isFinite(major) && major > 0 && major < 6) {
    throw new MigrateError(
      `unleash-server ${version} is older than 6: upgrade it to 6 or newer first (its own upgrade keeps its data), then copy`,
    );
  }
  const instanceId = uiConfig.versionInfo?.instanceId;
  await beforeReading(instanceId);

  const [environments, projects, featureTypes, tagTypes, tags, context, strategies, segments] =
    await Promise.all([
      api.get<{ environments: Json[] }>('/api/admin/environments'),
      api.get<{ projects: Json[] }>('/api/admin/projects'),
      api.get<{ types: Json[] }>('/api/admin/feature-types'),
      api.get<{ tagTypes: Json[] }>('/api/admin/tag-types'),
      api.get<{ tags: Json[] }>('/api/admin/tags'),
      api.get<Json[]>('/api/admin/context'),
      api.get<{ strategies: Json[] }>('/api/admin/strategies'),
      api.get<{ segments: Json[] }>('/api/admin/segments'),
    ]);

  for (const environment of environments.environments) {
    records.environments.set(String(environment.name), {
      type: String(environment.type),
      sortOrder: Number(environment.sortOrder ?? 0),
      enabled: environment.enabled !== false,
    });
  }
  for (const project of projects.projects) {
    const id = String(project.id);
    const overview = await api.get<{ environments?: (Json | string)[] }>(
      `/api/admin/projects/${encodeURIComponent(id)}/overview`,
    );
    const names = (overview.environments ?? []).map((entry) =>
      typeof entry === 'string' ? entry : String(entry.environment),
    );
    records.projects.set(id, {
      name: String(project.name ?? id),
      description: text(project.description),
      environments: [...names].sort(),
    });
  }
  for (const type of featureTypes.types) {
    records.featureTypes.set(String(type.id), {
      name: String(type.name),
      description: text(type.description),
      lifetimeDays: type.lifetimeDays === null ? null : Number(type.lifetimeDays),
    });
  }
  for (const type of tagTypes.tagTypes) {
    records.tagTypes.set(String(type.name), {
      description: text(type.description),
      icon: text(type.icon),
      color: text(type.color),
    });
  }
  for (const tag of tags.tags) records.tags.set(`${tag.type}:${tag.value}`, {});
  for (const field of context) {
    records.contextFields.set(String(field.name), {
      description: text(field.description),
      stickiness: field.stickiness === true,
      sortOrder: Number(field.sortOrder ?? 0),
      legalValues: legalValues(field.legalValues),
    });
  }
  for (const strategy of strategies.strategies) {
    // Built-in strategies exist on both sides and cannot be changed.
    if (strategy.editable !== true) continue;
    records.strategies.set(String(strategy.name), {
      title: text(strategy.title),
      description: text(strategy.description),
      parameters: (strategy.parameters ?? []) as unknown[],
      deprecated: strategy.deprecated === true,
    });
  }
  const segmentNames = new Map<number, string>();
  for (const segment of segments.segments) {
    segmentNames.set(Number(segment.id), String(segment.name));
    records.segments.set(String(segment.name), {
      description: text(segment.description),
      project: text(segment.project),
      constraints: ((segment.constraints ?? []) as Json[]).map(normalConstraint),
    });
  }

  await readFlags(api, records.flags, [...records.environments.keys()], segmentNames);
  // A flag lives in its project's environments only (an export of another answers a blank state).
  for (const [name, flag] of records.flags) {
    const own = records.projects.get(flag.project)?.environments;
    if (own === undefined) continue;
    const environments = Object.fromEntries(
      Object.entries(flag.environments).filter(([environment]) => own.includes(environment)),
    );
    records.flags.set(name, { ...flag, environments });
  }

  const secrets = new Map<string, string>();
  const tokens = await api.get<{ tokens: Json[] }>('/api/admin/api-tokens');
  for (const token of tokens.tokens) {
    const secret = String(token.secret);
    const type = String(token.type).toLowerCase();
    // unleash-server 4 called frontend tokens `proxy`.
    const kind = type === 'proxy' ? 'frontend' : type;
    if (kind !== 'admin' && kind !== 'client' && kind !== 'frontend') {
      notes.push(`API token "${token.tokenName}" is of type ${type}, which is not copied`);
      continue;
    }
    const projects = Array.isArray(token.projects)
      ? token.projects.map(String)
      : [String(token.project ?? '*')];
    const key = hashSecret(secret);
    const record: ApiTokenRecord = {
      tokenName: String(token.tokenName ?? token.username ?? kind),
      type: kind,
      environment: kind === 'admin' || token.environment === '*' ? null : String(token.environment),
      projects: [...projects].sort(),
      expiresAt: token.expiresAt ? isoTime(String(token.expiresAt)) : null,
    };
    records.apiTokens.set(key, record);
    secrets.set(key, secret);
  }

  const roleNames = new Map(
    (userAdmin.rootRoles ?? []).map((role) => [Number(role.id), String(role.name)]),
  );
  const defaultRoles: Record<number, string> = { 1: 'Admin', 2: 'Editor', 3: 'Viewer' };
  const userIds = new Map<string, number>();
  for (const user of userAdmin.users) {
    if (user.accountType === 'Service Account' || user.isService === true) {
      notes.push(`service account ${user.username ?? user.id} is not copied`);
      continue;
    }
    const email = text(user.email) || null;
    const username = text(user.username) || null;
    const key = userKey(email, username);
    if (key === undefined) continue;
    const roleId = Number(user.rootRole);
    let rootRole = roleNames.get(roleId) ?? defaultRoles[roleId] ?? 'Viewer';
    if (!['Admin', 'Editor', 'Viewer'].includes(rootRole)) {
      notes.push(
        `user ${email ?? username} has the custom root role "${rootRole}" (Enterprise): copied as Viewer`,
      );
      rootRole = 'Viewer';
    }
    records.users.set(key, { name: text(user.name) || null, email, username, rootRole });
    userIds.set(key, Number(user.id));
  }

  return { version, instanceId, records, secrets, userIds, notes };
}

/**
 * Every flag, live and archived: their names and dates from the search, their configuration per
 * environment from the export (what unleash-server's own import takes).
 */
async function readFlags(
  api: UnleashApi,
  flags: Map<string, FlagRecord>,
  environments: readonly string[],
  segmentNames: ReadonlyMap<number, string>,
): Promise<void> {
  const listed = new Map<string, { createdAt: string; archivedAt: string | null }>();
  for (const archived of [false, true]) {
    for (let offset = 0; ; offset += PAGE) {
      const query = new URLSearchParams({
        limit: String(PAGE),
        offset: String(offset),
        sortBy: 'name',
        sortOrder: 'asc',
        ...(archived ? { archived: 'IS:true' } : {}),
      });
      const page = await api.get<{ features: Json[]; total?: number }>(
        `/api/admin/search/features?${query}`,
      );
      for (const feature of page.features) {
        listed.set(String(feature.name), {
          createdAt: isoTime(String(feature.createdAt)),
          archivedAt: feature.archivedAt ? isoTime(String(feature.archivedAt)) : null,
        });
      }
      // The last page, by its size or by the total the search tells.
      if (page.features.length < PAGE) break;
      if (page.total !== undefined && offset + page.features.length >= page.total) break;
    }
  }
  const names = [...listed.keys()];
  const strategyIds = new Map<string, Map<string, string[]>>();
  for (let start = 0; start < names.length; start += BATCH) {
    const batch = names.slice(start, start + BATCH);
    const exports = await Promise.all(
      environments.map((environment) =>
        api.post<Json>('/api/admin/features-batch/export', { features: batch, environment }),
      ),
    );
    exports.forEach((exported, index) => {
      const environment = environments[index] as string;
      addExport(flags, listed, environment, exported, segmentNames, strategyIds);
    });
  }
  await orderStrategies(api, flags, strategyIds);
}

/** Requests for flags' strategy order made at once. */
const PARALLEL = 8;

/**
 * The export lists a flag's strategies in the order they were made, not in their `sortOrder`
 * (which decides whose variants apply): the flags with more than one strategy in an environment
 * are read one by one, and their strategies sorted. Archived flags cannot be read so: they keep
 * the export's order (no SDK sees them).
 */
async function orderStrategies(
  api: UnleashApi,
  flags: Map<string, FlagRecord>,
  strategyIds: ReadonlyMap<string, ReadonlyMap<string, string[]>>,
): Promise<void> {
  const several = [...flags].filter(
    ([, flag]) =>
      flag.archivedAt === null &&
      Object.values(flag.environments).some((state) => state.strategies.length > 1),
  );
  for (let start = 0; start < several.length; start += PARALLEL) {
    await Promise.all(
      several.slice(start, start + PARALLEL).map(async ([name, flag]) => {
        const feature = await api.get<{ environments?: Json[] }>(
          `/api/admin/projects/${encodeURIComponent(flag.project)}/features/${encodeURIComponent(name)}`,
        );
        const environments: Record<string, FlagEnvironment> = { ...flag.environments };
        for (const entry of feature.environments ?? []) {
          const environment = String(entry.name);
          const state = environments[environment];
          const ids = strategyIds.get(name)?.get(environment);
          if (state === undefined || ids === undefined) continue;
          const order = new Map(
            ((entry.strategies ?? []) as Json[]).map((strategy) => [
              String(strategy.id),
              Number(strategy.sortOrder ?? 0),
            ]),
          );
          const sorted = state.strategies
            .map((strategy, index) => ({
              strategy,
              index,
              sortOrder: order.get(ids[index] ?? '') ?? 0,
            }))
            .sort((a, b) => a.sortOrder - b.sortOrder || a.index - b.index)
            .map((entry) => entry.strategy);
          environments[environment] = { ...state, strategies: sorted };
        }
        flags.set(name, { ...flag, environments });
      }),
    );
  }
}

/** Adds one environment's export of a batch of flags to `flags`. */
function addExport(
  flags: Map<string, FlagRecord>,
  listed: ReadonlyMap<string, { createdAt: string; archivedAt: string | null }>,
  environment: string,
  exported: Json,
  segmentNames: ReadonlyMap<number, string>,
  strategyIds: Map<string, Map<string, string[]>>,
): void {
  const features = (exported.features ?? []) as Json[];
  const strategies = new Map<string, FlagStrategy[]>();
  for (const strategy of (exported.featureStrategies ?? []) as Json[]) {
    const name = String(strategy.featureName);
    const list = strategies.get(name) ?? [];
    const ids = strategyIds.get(name) ?? new Map<string, string[]>();
    strategyIds.set(name, ids);
    ids.set(environment, [...(ids.get(environment) ?? []), String(strategy.id)]);
    list.push({
      name: String(strategy.name),
      title: text(strategy.title) || null,
      disabled: strategy.disabled === true,
      parameters: stringParameters(strategy.parameters),
      constraints: ((strategy.constraints ?? []) as Json[]).map(normalConstraint) as Constraint[],
      variants: (strategy.variants ?? []) as unknown[],
      segments: ((strategy.segments ?? []) as number[])
        .map((id) => segmentNames.get(Number(id)) ?? `#${id}`)
        .sort(),
    });
    strategies.set(name, list);
  }
  const states = new Map<string, Json>();
  for (const state of (exported.featureEnvironments ?? []) as Json[]) {
    states.set(String(state.featureName ?? state.name), state);
  }
  const tags = new Map<string, string[]>();
  for (const tag of (exported.featureTags ?? []) as Json[]) {
    const name = String(tag.featureName);
    const type = tag.tagType ?? (tag.tag as Json | undefined)?.type;
    const value = tag.tagValue ?? (tag.tag as Json | undefined)?.value;
    tags.set(name, [...(tags.get(name) ?? []), `${type}:${value}`]);
  }
  const dependencies = new Map<string, Json[]>();
  for (const entry of (exported.dependencies ?? []) as Json[]) {
    dependencies.set(String(entry.feature), (entry.dependencies ?? []) as Json[]);
  }

  for (const feature of features) {
    const name = String(feature.name);
    const state = states.get(name);
    const own: FlagEnvironment = {
      enabled: state?.enabled === true,
      variants: (state?.variants ?? []) as unknown[],
      strategies: strategies.get(name) ?? [],
    };
    const existing = flags.get(name);
    if (existing) {
      flags.set(name, {
        ...existing,
        environments: { ...existing.environments, [environment]: own },
      });
      continue;
    }
    const dates = listed.get(name);
    flags.set(name, {
      project: String(feature.project),
      type: String(feature.type ?? 'release'),
      description: text(feature.description) || null,
      stale: feature.stale === true,
      impressionData: feature.impressionData === true,
      createdAt: dates?.createdAt ?? isoTime(new Date()),
      archivedAt: dates?.archivedAt ?? null,
      tags: [...new Set(tags.get(name) ?? [])].sort(),
      dependencies: (dependencies.get(name) ?? [])
        .map((parent) => {
          const enabled = parent.enabled !== false;
          return {
            parent: String(parent.feature),
            enabled,
            variants: enabled ? ((parent.variants ?? []) as unknown[]).map(String) : [],
          };
        })
        .sort((a, b) => (a.parent < b.parent ? -1 : a.parent > b.parent ? 1 : 0)),
      environments: { [environment]: own },
    });
  }
}
