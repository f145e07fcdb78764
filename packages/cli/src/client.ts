import {
  canonicalContextField,
  canonicalEnvironmentDefinition,
  canonicalFlag,
  canonicalProject,
  canonicalSegment,
  canonicalTagType,
  type Desired,
  type Flag,
  sortDesired,
} from './model.js';

/**
 * The Admin API as `flags` uses it, over HTTP only, the same requests to flags-server and to
 * unleash-server.
 */

/** A request the server refused (or could not answer). */
export class ServerError extends Error {
  constructor(
    readonly method: string,
    readonly path: string,
    readonly status: number,
    readonly serverMessage: string,
  ) {
    super(
      status === 0
        ? `${method} ${path}: ${serverMessage}`
        : `${method} ${path} answered ${status}: ${serverMessage}`,
    );
    this.name = 'ServerError';
  }
}

export interface Answer {
  readonly status: number;
  readonly etag: string | undefined;
  readonly body: unknown;
}

/** One server: its base URL (without `/api`) and an admin token. */
export class AdminClient {
  readonly url: string;
  constructor(
    url: string,
    private readonly token: string,
    private readonly fetcher: typeof fetch = fetch,
  ) {
    // `https://host/`, `https://host/api` and `https://host/api/` all mean the server at host.
    this.url = url.replace(/\/+$/, '').replace(/\/api$/, '');
  }

  /** Sends one request; a status of 400 or more throws a `ServerError` with the server's message. */
  async request(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Answer> {
    let response: Response | undefined;
    // A read is sent again when the connection fails: a server may close a kept-alive
    // connection just as it is reused. A write is not, since it may have been done.
    for (let attempt = 1; response === undefined; attempt++) {
      try {
        response = await this.fetcher(`${this.url}${path}`, {
          method,
          headers: {
            authorization: this.token,
            accept: 'application/json',
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
            ...headers,
          },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
      } catch (error) {
        if (method === 'GET' && attempt < 3) continue;
        const cause = (error as { cause?: { message?: string } }).cause?.message;
        throw new ServerError(method, path, 0, `no answer from ${this.url} (${cause ?? error})`);
      }
    }
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      // Not JSON: the text is the message.
    }
    if (response.status >= 400) {
      const message =
        typeof parsed === 'object' && parsed !== null && 'message' in parsed
          ? String((parsed as { message: unknown }).message)
          : text.slice(0, 300);
      throw new ServerError(method, path, response.status, message);
    }
    return {
      status: response.status,
      etag: response.headers.get('etag') ?? undefined,
      body: parsed,
    };
  }

  async get<T>(path: string): Promise<T> {
    return (await this.request('GET', path)).body as T;
  }
}

/** What the plan needs of a flag on the server besides its canonical form. */
export interface FlagOnServer {
  readonly project: string;
  readonly flag: Flag;
  /** Its `ETag` when read; a strong one is sent back as `If-Match`. */
  readonly etag: string | undefined;
  /** The ids of its strategies, per environment, in order. */
  readonly strategyIds: Readonly<Record<string, readonly string[]>>;
}

export interface ServerState {
  readonly desired: Desired;
  readonly flags: ReadonlyMap<string, FlagOnServer>;
  /** Segment name → id. */
  readonly segmentIds: ReadonlyMap<string, number>;
}

type Loose = Record<string, unknown>;

/** Runs `work` over `items`, at most `limit` at a time, answers in order. */
async function inBatches<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await work(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

export const flagPath = (project: string, flag: string) =>
  `/api/admin/projects/${encodeURIComponent(project)}/features/${encodeURIComponent(flag)}`;

/** One flag, read whole: definition, environments with strategies and variants, tags. */
export async function readFlag(
  client: AdminClient,
  project: string,
  name: string,
  segmentName: (id: unknown) => string,
): Promise<FlagOnServer> {
  // unleash-server leaves the environments' variants out unless asked; flags-server answers them.
  const [detail, tags] = await Promise.all([
    client.request('GET', `${flagPath(project, name)}?variantEnvironments=true`),
    client.get<{ tags: { type: string; value: string }[] }>(
      `/api/admin/features/${encodeURIComponent(name)}/tags`,
    ),
  ]);
  const raw = detail.body as Loose & { environments: (Loose & { name: string })[] };
  const environments: Record<string, Loose> = {};
  const strategyIds: Record<string, string[]> = {};
  for (const environment of raw.environments ?? []) {
    const strategies = [...((environment.strategies as Loose[] | undefined) ?? [])].sort(
      (a, b) => Number(a.sortOrder ?? 0) - Number(b.sortOrder ?? 0),
    );
    environments[environment.name] = { ...environment, strategies };
    strategyIds[environment.name] = strategies.map((strategy) => String(strategy.id));
  }
  const flag = canonicalFlag({ ...raw, environments, tags: tags.tags }, segmentName);
  return { project, flag, etag: detail.etag, strategyIds };
}

/**
 * Everything `flags` manages on the server: projects, environments, segments, context fields,
 * tag types and every active flag of the projects, read whole.
 */
export async function readServer(client: AdminClient): Promise<ServerState> {
  const [projects, environments, segments, contextFields, tagTypes] = await Promise.all([
    client.get<{ projects: Loose[] }>('/api/admin/projects'),
    client.get<{ environments: Loose[] }>('/api/admin/environments'),
    client.get<{ segments: (Loose & { id: number; name: string })[] }>('/api/admin/segments'),
    client.get<Loose[]>('/api/admin/context'),
    client.get<{ tagTypes: Loose[] }>('/api/admin/tag-types'),
  ]);
  const segmentIds = new Map(segments.segments.map((segment) => [segment.name, segment.id]));
  const namesById = new Map(segments.segments.map((segment) => [segment.id, segment.name]));
  const segmentName = (id: unknown) => namesById.get(Number(id)) ?? `#${id}`;
  const listed = await Promise.all(
    projects.projects.map(async (project) => {
      const id = String(project.id);
      const { features } = await client.get<{ features: { name: string }[] }>(
        `/api/admin/projects/${encodeURIComponent(id)}/features`,
      );
      return features.map((feature) => ({ project: id, name: feature.name }));
    }),
  );
  const read = await inBatches(listed.flat(), 8, ({ project, name }) =>
    readFlag(client, project, name, segmentName),
  );
  const flags = new Map(read.map((flag) => [`${flag.project}/${flag.flag.name}`, flag]));
  const desired = sortDesired({
    projects: projects.projects.map(canonicalProject),
    environments: environments.environments.map(canonicalEnvironmentDefinition),
    segments: segments.segments.map(canonicalSegment),
    contextFields: contextFields.map(canonicalContextField),
    tagTypes: tagTypes.tagTypes.map(canonicalTagType),
    flags: read.map(({ project, flag }) => ({ project, flag })),
  });
  return { desired, flags, segmentIds };
}

/** One entry of the event log, as both servers answer it. */
export interface ServerEvent {
  readonly id: number;
  readonly type: string;
  readonly createdBy: string;
  readonly createdAt: string;
  readonly environment?: string | null;
}

/** The latest events of a flag, newest first. */
export async function flagEvents(client: AdminClient, name: string): Promise<ServerEvent[]> {
  const { events } = await client.get<{ events: ServerEvent[] }>(
    `/api/admin/search/events?feature=${encodeURIComponent(`IS:${name}`)}&limit=100`,
  );
  return [...events].sort((a, b) => b.id - a.id);
}
