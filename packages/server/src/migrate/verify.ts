import { maskToken } from '../config/load.js';
import { canonicalJson, normalConstraint } from './records.js';
import { MigrateError, UnleashApi } from './unleash-source.js';

type Json = Record<string, unknown>;

/** One answer that differs between the two servers. */
export interface Difference {
  readonly token: string;
  readonly what: string;
  readonly unleash: string;
  readonly flags: string;
}

export interface VerifyResult {
  /** Per token checked: its masked secret, kind, and how many comparisons were made. */
  readonly checked: { token: string; type: string; comparisons: number }[];
  readonly differences: Difference[];
}

/** A small deterministic generator (mulberry32): the same contexts on every run. */
function generator(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * `count` contexts as a frontend SDK sends them (query parameters): user and session ids, and the
 * custom context fields with their legal values (or made-up values when they have none). Every
 * context has a user id, a session id and the fields that can be stickiness: a variant or rollout
 * sticky to a field the context lacks is random, and random answers cannot be compared.
 */
export function generateContexts(
  count: number,
  fields: readonly { name: string; legalValues: readonly string[]; stickiness?: boolean }[],
  seed = 4242,
): URLSearchParams[] {
  const random = generator(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
  const contexts: URLSearchParams[] = [];
  const builtIn = new Set([
    'userId',
    'sessionId',
    'remoteAddress',
    'appName',
    'environment',
    'currentTime',
  ]);
  for (let i = 0; i < count; i++) {
    const context = new URLSearchParams();
    context.set('userId', `user-${Math.floor(random() * 5000)}`);
    context.set('sessionId', `session-${Math.floor(random() * 100_000)}`);
    for (const field of fields) {
      if (builtIn.has(field.name) || (field.stickiness !== true && random() < 0.3)) continue;
      const value =
        field.legalValues.length > 0 && random() < 0.8
          ? pick(field.legalValues)
          : pick(['1', '2.5', '10', '1.2.3', '2.0.0-beta.1', 'a', 'beta', 'x@example.com', 'no']);
      context.set(`properties[${field.name}]`, value);
    }
    contexts.push(context);
  }
  return contexts;
}

/** A frontend answer as an app sees it: per enabled flag, its variant and impression data. */
function frontendView(body: Json): Map<string, string> {
  const view = new Map<string, string>();
  for (const toggle of (body.toggles ?? []) as Json[]) {
    const variant = (toggle.variant ?? {}) as Json;
    view.set(
      String(toggle.name),
      canonicalJson({
        enabled: toggle.enabled,
        impressionData: toggle.impressionData === true,
        variant: {
          name: variant.name,
          enabled: variant.enabled,
          ...(variant.payload ? { payload: variant.payload } : {}),
        },
      }),
    );
  }
  return view;
}

/** The flags two views differ on, each with both sides. */
function differingFlags(a: Map<string, string>, b: Map<string, string>) {
  const names = [...new Set([...a.keys(), ...b.keys()])].sort();
  return names
    .filter((name) => a.get(name) !== b.get(name))
    .map((name) => ({
      name,
      unleash: a.get(name) ?? '(absent)',
      flags: b.get(name) ?? '(absent)',
    }));
}

/**
 * `/api/client/features` as an SDK reads it: per flag (by name) its state, variants and
 * dependencies, and its strategies in order with their constraints and their segments'
 * constraints (segments resolved, whether sent by reference or inlined).
 */
export function clientView(body: Json): Map<string, string> {
  const segments = new Map<number, unknown[]>(
    ((body.segments ?? []) as Json[]).map((segment) => [
      Number(segment.id),
      ((segment.constraints ?? []) as Json[]).map((constraint) =>
        canonicalJson(normalConstraint(constraint)),
      ),
    ]),
  );
  const view = new Map<string, string>();
  for (const feature of (body.features ?? []) as Json[]) {
    const strategies = ((feature.strategies ?? []) as Json[]).map((strategy) => ({
      name: strategy.name,
      parameters: Object.fromEntries(
        Object.entries((strategy.parameters ?? {}) as Json).map(([key, value]) => [
          key,
          String(value),
        ]),
      ),
      constraints: [
        ...((strategy.constraints ?? []) as Json[]).map((constraint) =>
          canonicalJson(normalConstraint(constraint)),
        ),
        ...((strategy.segments ?? []) as number[]).flatMap(
          (id) => segments.get(Number(id)) ?? [`missing segment ${id}`],
        ),
      ].sort(),
      variants: ((strategy.variants ?? []) as Json[]).map(variantView),
    }));
    view.set(
      String(feature.name),
      canonicalJson({
        project: feature.project,
        enabled: feature.enabled,
        impressionData: feature.impressionData === true,
        variants: ((feature.variants ?? []) as Json[]).map(variantView),
        // A set: unleash-server lists a dependency once per strategy of the flag; SDKs check
        // each one, so how often it is listed changes no answer.
        dependencies: [
          ...new Set(
            ((feature.dependencies ?? []) as Json[]).map((dependency) =>
              canonicalJson({
                feature: dependency.feature,
                enabled: dependency.enabled !== false,
                variants: dependency.variants ?? [],
              }),
            ),
          ),
        ].sort(),
        strategies,
      }),
    );
  }
  return view;
}

function variantView(variant: Json) {
  return {
    name: variant.name,
    weight: variant.weight,
    stickiness: variant.stickiness ?? 'default',
    ...(variant.payload ? { payload: variant.payload } : {}),
    ...(Array.isArray(variant.overrides) && variant.overrides.length > 0
      ? { overrides: variant.overrides }
      : {}),
  };
}

async function read(url: string, token: string, what: string): Promise<Json> {
  let response: Response;
  try {
    response = await fetch(url, {
      headers: { authorization: token, accept: 'application/json' },
      signal: AbortSignal.timeout(60_000),
    });
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause;
    throw new MigrateError(
      `cannot reach ${what} at ${url} (${cause?.code ?? (error as Error).message})`,
    );
  }
  const text = await response.text();
  if (response.status !== 200) {
    throw new MigrateError(
      `${what} answered ${response.status} to ${new URL(url).pathname} with token ${maskToken(token)}: ${text.slice(0, 200)}`,
    );
  }
  return JSON.parse(text) as Json;
}

/**
 * Compares what SDKs get from unleash-server (`unleash`) and flags-server (`flags`) with each of
 * unleash-server's client and frontend tokens: the client features of each client token, and the
 * frontend answers of `contexts` generated contexts for each frontend token.
 */
export async function verifyCopy(options: {
  unleash: UnleashApi;
  flagsUrl: string;
  contexts: number;
  /** Called after each token, for progress. */
  onToken?: (token: string, type: string, differences: number) => void;
}): Promise<VerifyResult> {
  const { unleash } = options;
  const flags = new UnleashApi(options.flagsUrl, '');
  const [tokens, context] = await Promise.all([
    unleash.get<{ tokens: Json[] }>('/api/admin/api-tokens'),
    unleash.get<Json[]>('/api/admin/context'),
  ]);
  const fields = context.map((field) => ({
    name: String(field.name),
    stickiness: field.stickiness === true,
    legalValues: ((field.legalValues ?? []) as Json[]).map((entry) => String(entry.value)),
  }));
  const contexts = generateContexts(options.contexts, fields);
  const checked: VerifyResult['checked'] = [];
  const differences: Difference[] = [];
  for (const token of tokens.tokens) {
    const secret = String(token.secret);
    const type = String(token.type).toLowerCase();
    const shown = maskToken(secret);
    const before = differences.length;
    if (type === 'client') {
      const path = '/api/client/features';
      const [theirs, ours] = await Promise.all([
        read(unleash.url(path), secret, 'unleash-server'),
        read(flags.url(path), secret, 'flags-server'),
      ]);
      const a = clientView(theirs);
      const b = clientView(ours);
      for (const flag of differingFlags(a, b)) {
        differences.push({ token: shown, what: `client features: flag ${flag.name}`, ...flag });
      }
      checked.push({ token: shown, type, comparisons: a.size });
    } else if (type === 'frontend' || type === 'proxy') {
      let compared = 0;
      // A few requests at a time: the servers' own limits are not the subject.
      const parallel = 8;
      for (let start = 0; start < contexts.length; start += parallel) {
        await Promise.all(
          contexts.slice(start, start + parallel).map(async (query) => {
            const path = `/api/frontend?${query}`;
            const [theirs, ours] = await Promise.all([
              read(unleash.url(path), secret, 'unleash-server'),
              read(flags.url(path), secret, 'flags-server'),
            ]);
            compared++;
            for (const flag of differingFlags(frontendView(theirs), frontendView(ours))) {
              differences.push({
                token: shown,
                what: `frontend ?${query}: flag ${flag.name}`,
                unleash: flag.unleash,
                flags: flag.flags,
              });
            }
          }),
        );
      }
      checked.push({ token: shown, type, comparisons: compared });
    } else {
      continue;
    }
    options.onToken?.(shown, type, differences.length - before);
  }
  return { checked, differences };
}
