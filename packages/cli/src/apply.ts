import { type AdminClient, flagPath, ServerError, type ServerState } from './client.js';
import type { Constraint, Desired, Flag, Strategy, Variant } from './model.js';
import {
  type Action,
  alignedFlag,
  definitionOf,
  flagParts,
  flagVersion,
  heldFlag,
  type Plan,
} from './plan.js';

/**
 * Makes the server match the plan, action by action in the plan's order (context fields and
 * segments before the flags using them, parents before children). A flag's writes carry
 * `If-Match`: where the server checks it (flags-server), an edit made since the plan read the flag
 * answers 412 and that flag is reported as a conflict, the rest applied.
 */

export interface Outcome {
  readonly action: Action;
  readonly result: 'applied' | 'conflict' | 'failed';
  readonly message?: string;
}

/** Where the server's answer says the flag moved on under us. */
export class ConflictError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConflictError';
  }
}

const fullConstraint = (constraint: Constraint) => ({
  contextName: constraint.contextName,
  operator: constraint.operator,
  values: constraint.values ?? [],
  ...(constraint.value === undefined ? {} : { value: constraint.value }),
  caseInsensitive: constraint.caseInsensitive ?? false,
  inverted: constraint.inverted ?? false,
});

/**
 * Variants with every weight: fix ones keep theirs, variable ones share what is left of 1000, the
 * first ones one more each until the remainder is spent (as servers store them; a server that
 * shares them out itself is told the same).
 */
function fullVariants(variants: readonly Variant[]) {
  const fixed = variants
    .filter((variant) => variant.weightType === 'fix')
    .reduce((sum, variant) => sum + (variant.weight ?? 0), 0);
  const variable = variants.filter((variant) => variant.weightType !== 'fix').length;
  const share = variable === 0 ? 0 : Math.floor((1000 - fixed) / variable);
  let remainder = variable === 0 ? 0 : 1000 - fixed - share * variable;
  return variants.map((variant) => {
    const fix = variant.weightType === 'fix';
    const weight = fix ? (variant.weight ?? 0) : share + (remainder-- > 0 ? 1 : 0);
    return {
      name: variant.name,
      weight,
      weightType: fix ? 'fix' : 'variable',
      stickiness: variant.stickiness ?? 'default',
      ...(variant.payload ? { payload: variant.payload } : {}),
    };
  });
}

const featureVariants = (variants: readonly Variant[]) =>
  fullVariants(variants).map((variant, i) => ({
    ...variant,
    overrides: variants[i]?.overrides ?? [],
  }));

/** A strong ETag the server can check; the next one after a write, when it counts writes. */
const strong = (etag: string | undefined) =>
  etag !== undefined && !etag.startsWith('W/') ? etag : undefined;
const nextOf = (etag: string | undefined) => {
  const counted = etag?.match(/^"(\d+)"$/);
  return counted ? `"${Number(counted[1]) + 1}"` : undefined;
};

/** Writes of one flag, each with `If-Match` while the flag's version is known. */
class FlagWriter {
  private etag: string | undefined;
  constructor(
    private readonly client: AdminClient,
    etag: string | undefined,
  ) {
    this.etag = strong(etag);
  }

  async write(method: string, path: string, body?: unknown): Promise<unknown> {
    const headers: Record<string, string> = this.etag ? { 'if-match': this.etag } : {};
    try {
      const answer = await this.client.request(method, path, body, headers);
      this.etag = strong(answer.etag) ?? nextOf(this.etag);
      return answer.body;
    } catch (error) {
      if (error instanceof ServerError && error.status === 412) {
        throw new ConflictError(error.serverMessage);
      }
      throw error;
    }
  }

  /** A write the server does not count as a write of this flag's version (tags). */
  async untracked(method: string, path: string, body?: unknown): Promise<void> {
    await this.client.request(method, path, body);
    this.etag = undefined;
  }

  setEtag(etag: string | undefined) {
    this.etag = strong(etag);
  }
}

function strategyBody(
  strategy: Strategy,
  sortOrder: number,
  segmentIds: ReadonlyMap<string, number>,
) {
  return {
    name: strategy.name,
    title: strategy.title ?? null,
    disabled: strategy.disabled ?? false,
    parameters: strategy.parameters ?? {},
    constraints: (strategy.constraints ?? []).map(fullConstraint),
    segments: (strategy.segments ?? []).map((name) => {
      const id = segmentIds.get(name);
      if (id === undefined) throw new Error(`segment "${name}" does not exist on the server`);
      return id;
    }),
    variants: fullVariants(strategy.variants ?? []),
    sortOrder,
  };
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** Creates `flag` in `project`, every part of it from its file (the parts people own too). */
async function createFlag(
  client: AdminClient,
  project: string,
  flag: Flag,
  segmentIds: ReadonlyMap<string, number>,
): Promise<void> {
  const definition = definitionOf(flag);
  const created = await client.request(
    'POST',
    `/api/admin/projects/${encodeURIComponent(project)}/features`,
    {
      name: flag.name,
      type: definition.type,
      description: definition.description,
      impressionData: definition.impressionData,
    },
  );
  const writer = new FlagWriter(client, created.etag);
  // What the creation wrote already; the rest (stale, environments, parents, tags) follows.
  const written: Flag = {
    name: flag.name,
    type: definition.type,
    description: definition.description,
    impressionData: definition.impressionData,
  };
  await writeParts(writer, project, flag, written, segmentIds, undefined);
}

/**
 * Writes the parts of `wanted` that differ from `held` and that `owned` admits (all when
 * `owned` is undefined: a creation).
 */
async function writeParts(
  writer: FlagWriter,
  project: string,
  wanted: Flag,
  held: Flag,
  segmentIds: ReadonlyMap<string, number>,
  strategyIds: Readonly<Record<string, readonly string[]>> | undefined,
): Promise<void> {
  const owned = (field: string) =>
    strategyIds === undefined || !(wanted.ui ?? []).includes(field as never);
  const base = flagPath(project, wanted.name);
  const parts = flagParts(wanted, held).filter(
    (part) => owned(part.field) && !same(part.wanted, part.held),
  );
  const enabling: (() => Promise<unknown>)[] = [];
  let tags: (() => Promise<void>) | undefined;
  for (const part of parts) {
    const env =
      part.environment === undefined
        ? ''
        : `${base}/environments/${encodeURIComponent(part.environment)}`;
    switch (part.field) {
      case 'definition': {
        const wantedDefinition = part.wanted as ReturnType<typeof definitionOf>;
        const heldDefinition = part.held as ReturnType<typeof definitionOf>;
        const { stale, ...metadata } = wantedDefinition;
        const { stale: heldStale, ...heldMetadata } = heldDefinition;
        if (!same(metadata, heldMetadata)) {
          await writer.write('PUT', base, { name: wanted.name, ...metadata });
        }
        if (stale !== heldStale) {
          await writer.write('PATCH', base, [{ op: 'replace', path: '/stale', value: stale }]);
        }
        break;
      }
      case 'strategies': {
        const want = part.wanted as Strategy[];
        const have = part.held as Strategy[];
        const ids = strategyIds?.[part.environment!] ?? [];
        for (let i = 0; i < want.length; i++) {
          const body = strategyBody(want[i]!, i, segmentIds);
          if (i < have.length && ids[i] !== undefined) {
            if (!same(want[i], have[i])) {
              await writer.write('PUT', `${env}/strategies/${encodeURIComponent(ids[i]!)}`, body);
            }
          } else {
            await writer.write('POST', `${env}/strategies`, body);
          }
        }
        for (let i = want.length; i < have.length; i++) {
          if (ids[i] !== undefined) {
            await writer.write('DELETE', `${env}/strategies/${encodeURIComponent(ids[i]!)}`);
          }
        }
        break;
      }
      case 'variants':
        await writer.write('PUT', `${env}/variants`, featureVariants(part.wanted as Variant[]));
        break;
      case 'enabled':
        // After the strategies: unleash-server gives a flag switched on without any a default one.
        enabling.push(() => writer.write('POST', `${env}/${part.wanted ? 'on' : 'off'}`));
        break;
      case 'dependencies':
        break;
      case 'tags': {
        const want = part.wanted as { type: string; value: string }[];
        const have = part.held as { type: string; value: string }[];
        const key = (tag: { type: string; value: string }) => `${tag.type}:${tag.value}`;
        const wantKeys = new Set(want.map(key));
        const haveKeys = new Set(have.map(key));
        tags = async () => {
          for (const tag of have.filter((t) => !wantKeys.has(key(t)))) {
            await writer.untracked(
              'DELETE',
              `/api/admin/features/${encodeURIComponent(wanted.name)}/tags/${encodeURIComponent(tag.type)}/${encodeURIComponent(tag.value)}`,
            );
          }
          for (const tag of want.filter((t) => !haveKeys.has(key(t)))) {
            await writer.untracked(
              'POST',
              `/api/admin/features/${encodeURIComponent(wanted.name)}/tags`,
              tag,
            );
          }
        };
        break;
      }
    }
  }
  for (const enable of enabling) await enable();
  const dependencies = parts.find((part) => part.field === 'dependencies');
  if (dependencies) {
    const want = dependencies.wanted as NonNullable<Flag['dependencies']>;
    const have = dependencies.held as NonNullable<Flag['dependencies']>;
    for (const parent of have) {
      if (!want.some((d) => same(d, parent))) {
        await writer.write('DELETE', `${base}/dependencies/${encodeURIComponent(parent.feature)}`);
      }
    }
    for (const parent of want) {
      if (!have.some((d) => same(d, parent))) {
        await writer.write('POST', `${base}/dependencies`, {
          feature: parent.feature,
          enabled: parent.enabled ?? true,
          ...(parent.variants ? { variants: parent.variants } : {}),
        });
      }
    }
  }
  await tags?.();
}

/** Creates or updates a resource other than a flag. */
async function applySimple(
  client: AdminClient,
  action: Action,
  wanted: Desired,
  segmentIds: Map<string, number>,
): Promise<void> {
  const create = action.action === 'create';
  const name = encodeURIComponent(action.name);
  switch (action.kind) {
    case 'project': {
      const project = wanted.projects.find((p) => p.id === action.name)!;
      const body = {
        id: project.id,
        name: project.name ?? project.id,
        description: project.description ?? '',
      };
      if (create) await client.request('POST', '/api/admin/projects', body);
      else await client.request('PUT', `/api/admin/projects/${name}`, body);
      return;
    }
    case 'environment': {
      const environment = wanted.environments.find((e) => e.name === action.name)!;
      const body = { name: environment.name, type: environment.type ?? 'development' };
      if (create) await client.request('POST', '/api/admin/environments', body);
      else
        await client.request('PUT', `/api/admin/environments/update/${name}`, { type: body.type });
      return;
    }
    case 'tag type': {
      const tagType = wanted.tagTypes.find((t) => t.name === action.name)!;
      const body = {
        name: tagType.name,
        description: tagType.description ?? '',
        ...(tagType.icon ? { icon: tagType.icon } : {}),
      };
      if (create) await client.request('POST', '/api/admin/tag-types', body);
      else await client.request('PUT', `/api/admin/tag-types/${name}`, body);
      return;
    }
    case 'context field': {
      const field = wanted.contextFields.find((c) => c.name === action.name)!;
      const body = {
        name: field.name,
        description: field.description ?? '',
        stickiness: field.stickiness ?? false,
        legalValues: field.legalValues ?? [],
      };
      if (create) await client.request('POST', '/api/admin/context', body);
      else await client.request('PUT', `/api/admin/context/${name}`, body);
      return;
    }
    case 'segment': {
      const segment = wanted.segments.find((s) => s.name === action.name)!;
      const body = {
        name: segment.name,
        description: segment.description ?? '',
        ...(segment.project ? { project: segment.project } : {}),
        constraints: (segment.constraints ?? []).map(fullConstraint),
      };
      if (create) {
        const created = await client.request('POST', '/api/admin/segments', body);
        segmentIds.set(segment.name, Number((created.body as { id: number }).id));
      } else {
        await client.request('PUT', `/api/admin/segments/${segmentIds.get(segment.name)}`, body);
      }
      return;
    }
    case 'flag':
      throw new Error('flags are applied by applyFlag');
  }
}

/**
 * Applies `plan`, computed from `wanted` and `server`. `expected` holds, per flag, the version a
 * saved plan saw: a flag that has changed since is a conflict, and nothing of it is written.
 */
export async function applyPlan(
  client: AdminClient,
  plan: Plan,
  wanted: Desired,
  server: ServerState,
  expected?: ReadonlyMap<string, string | undefined>,
): Promise<Outcome[]> {
  const segmentIds = new Map(server.segmentIds);
  const wantedFlags = new Map(
    wanted.flags.map(({ project, flag }) => [`${project}/${flag.name}`, flag]),
  );
  const outcomes: Outcome[] = [];
  for (const action of plan.actions) {
    try {
      if (action.kind !== 'flag') {
        await applySimple(client, action, wanted, segmentIds);
        outcomes.push({ action, result: 'applied' });
        continue;
      }
      const key = `${action.project}/${action.name}`;
      const held = heldFlag(server, action);
      if (expected?.has(key)) {
        const saw = expected.get(key);
        const now = held ? flagVersion(held.flag) : undefined;
        if (saw !== now) {
          throw new ConflictError(
            `changed on the server since the plan (${now === undefined ? 'it is gone' : 'edited'}); run plan again`,
          );
        }
      }
      const project = action.project!;
      if (action.action === 'create') {
        await createFlag(client, project, wantedFlags.get(key)!, segmentIds);
      } else if (action.action === 'archive') {
        await new FlagWriter(client, held?.etag).write('DELETE', flagPath(project, action.name));
      } else {
        const flag = wantedFlags.get(key)!;
        const writer = new FlagWriter(client, held?.etag);
        await writeParts(
          writer,
          project,
          alignedFlag(flag, held?.flag),
          held!.flag,
          segmentIds,
          held!.strategyIds,
        );
      }
      outcomes.push({ action, result: 'applied' });
    } catch (error) {
      if (error instanceof ConflictError) {
        outcomes.push({ action, result: 'conflict', message: error.message });
      } else {
        outcomes.push({ action, result: 'failed', message: (error as Error).message });
      }
    }
  }
  return outcomes;
}
