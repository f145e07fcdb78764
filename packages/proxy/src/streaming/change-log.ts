import type { DeltaEvent } from '@flags/engine';
import type { ClientFeature, ClientFeatures, Segment } from '@flags/schemas';
import type { EnvironmentState } from '@flags/serving';

/** One change of an environment's payload, with the project that decides who may see it. */
interface Entry {
  readonly id: number;
  readonly event: DeltaEvent;
  /** A feature's project (`default` when unset); `undefined` for segments, which every scope sees. */
  readonly project: string | undefined;
}

/** A feature or segment of the last payload, and its JSON once it had to be compared. */
interface Known<T> {
  readonly item: T;
  json: string | undefined;
}

/** Cached `{"events":[hydration]}` of a scope, valid while the log's latest id is `id`. */
interface Hydration {
  readonly id: number;
  readonly json: string;
}

/** Project sets a log keeps scopes for at most (tokens rarely differ in more; see `EnvironmentState`). */
const MAX_SCOPES = 64;

/**
 * What one token sees of a change log: its projects (`undefined`: all). Scopes are interned by the
 * log, so every stream and request of the same projects shares one object, and a change is
 * rendered once per scope and written to all of its streams.
 */
export class Scope {
  /** The last hydration rendered for this scope. */
  hydration: Hydration | undefined;

  constructor(
    readonly log: ChangeLog,
    readonly key: string,
    private readonly projects: ReadonlySet<string> | undefined,
  ) {}

  /** Whether a change of a feature of `project` (`undefined`: a segment) is this scope's. */
  sees(project: string | undefined): boolean {
    return project === undefined || this.projects === undefined || this.projects.has(project);
  }

  seesFeature(feature: ClientFeature): boolean {
    return this.sees(feature.project ?? 'default');
  }
}

/** Called with the ids (exclusive, inclusive) of the events a new payload added. */
export type ChangeListener = (log: ChangeLog, after: number, latest: number) => void;

export interface ChangeLogOptions {
  /** Events kept for resuming clients; an older id gets a hydration instead. */
  readonly retained: number;
  /** Epoch ms the log starts at: its ids begin at this × 1000. */
  readonly startMs: number;
}

/**
 * The changes of one environment's payload as delta events (client specification 19/20), for
 * `/api/client/delta` and `/api/client/streaming`. Every new payload is compared with the last one
 * (features by name, segments by id, by their JSON) and the differences become events with
 * increasing ids; the last `retained` are kept.
 *
 * Event ids are this log's own: several proxies behind one load balancer each keep a log, and an
 * id from another proxy (or from this one before a restart) must never pass for "up to date". So
 * ids start at the log's creation time in epoch ms × 1000 and count up by one per event, and any id
 * outside [first id, latest id] is unknown and answered with a hydration. Two logs' ranges overlap
 * only if they start within (their events ÷ 1000) ms of each other.
 */
export class ChangeLog {
  /** The id of the log's start: a client holding it has seen the payload the log started with. */
  readonly baseId: number;
  private latestId: number;
  private readonly entries: Entry[] = [];
  private features = new Map<string, Known<ClientFeature>>();
  private segments = new Map<number, Known<Segment>>();
  private payload: ClientFeatures;
  private readonly scopes = new Map<string, Scope>();
  private readonly listeners: ChangeListener[] = [];

  constructor(
    initial: ClientFeatures,
    private readonly options: ChangeLogOptions,
  ) {
    this.baseId = options.startMs * 1000;
    this.latestId = this.baseId;
    this.payload = initial;
    for (const feature of initial.features)
      this.features.set(feature.name, { item: feature, json: undefined });
    for (const segment of initial.segments ?? [])
      this.segments.set(segment.id, { item: segment, json: undefined });
  }

  /** The id of the newest event (the log's base id before any change). */
  get latest(): number {
    return this.latestId;
  }

  /** The scope of a token reading `projects` (`*` among them: every project). */
  scope(projects: readonly string[]): Scope {
    const all = projects.includes('*');
    const key = all ? '*' : projects.join('\u0000');
    let scope = this.scopes.get(key);
    if (scope === undefined) {
      scope = new Scope(this, key, all ? undefined : new Set(projects));
      // Bounded as `EnvironmentState.forProjects` is: a scope dropped here is made again if asked for.
      if (this.scopes.size >= MAX_SCOPES) {
        const oldest = this.scopes.keys().next().value as string;
        this.scopes.delete(oldest);
      }
      this.scopes.set(key, scope);
    }
    return scope;
  }

  /** Calls `listener` after each payload that changed something. */
  onChange(listener: ChangeListener): void {
    this.listeners.push(listener);
  }

  /**
   * Whether the log can answer "what changed since `id`" from the events it keeps: `id` was issued
   * by this log and no newer event has been dropped.
   */
  holds(id: number): boolean {
    const oldest = this.entries[0];
    const firstKnown = oldest === undefined ? this.baseId : oldest.id - 1;
    return Number.isSafeInteger(id) && id >= firstKnown && id <= this.latestId;
  }

  /** The events of `scope` after `id` (`holds(id)` must be true), oldest first. */
  eventsAfter(id: number, scope: Scope, until = this.latestId): DeltaEvent[] {
    const events: DeltaEvent[] = [];
    // Ids are consecutive, so the first event after `id` sits at a known position.
    const oldest = this.entries[0];
    if (oldest === undefined) return events;
    for (let i = Math.max(0, id + 1 - oldest.id); i < this.entries.length; i++) {
      const entry = this.entries[i] as Entry;
      if (entry.id > until) break;
      if (scope.sees(entry.project)) events.push(entry.event);
    }
    return events;
  }

  /** `{"events":[{type:'hydration', …}]}` of `scope` at the latest id, rendered once per change. */
  hydrationJson(scope: Scope): string {
    const kept = scope.hydration;
    if (kept !== undefined && kept.id === this.latestId) return kept.json;
    const event: DeltaEvent = {
      eventId: this.latestId,
      type: 'hydration',
      features: this.payload.features.filter((feature) => scope.seesFeature(feature)),
      segments: this.payload.segments ?? [],
    };
    const json = JSON.stringify({ events: [event] });
    scope.hydration = { id: this.latestId, json };
    return json;
  }

  /** Compares `payload` with the last one and appends its differences as events. */
  record(payload: ClientFeatures): void {
    const before = this.latestId;
    const features = new Map<string, Known<ClientFeature>>();
    for (const feature of payload.features) {
      const known = this.features.get(feature.name);
      const now: Known<ClientFeature> = { item: feature, json: undefined };
      features.set(feature.name, now);
      if (known !== undefined && !changed(known, now)) continue;
      const project = feature.project ?? 'default';
      const previousProject = known === undefined ? undefined : (known.item.project ?? 'default');
      // Moved to another project: the old project's tokens must drop it.
      if (previousProject !== undefined && previousProject !== project)
        this.append(
          { type: 'feature-removed', featureName: feature.name, project: previousProject },
          previousProject,
        );
      this.append({ type: 'feature-updated', feature }, project);
    }
    for (const [name, known] of this.features) {
      if (features.has(name)) continue;
      const project = known.item.project ?? 'default';
      this.append({ type: 'feature-removed', featureName: name, project }, project);
    }
    const segments = new Map<number, Known<Segment>>();
    for (const segment of payload.segments ?? []) {
      const known = this.segments.get(segment.id);
      const now: Known<Segment> = { item: segment, json: undefined };
      segments.set(segment.id, now);
      if (known === undefined || changed(known, now))
        this.append({ type: 'segment-updated', segment }, undefined);
    }
    for (const id of this.segments.keys())
      if (!segments.has(id)) this.append({ type: 'segment-removed', segmentId: id }, undefined);
    this.features = features;
    this.segments = segments;
    this.payload = payload;
    const overflow = this.entries.length - this.options.retained;
    if (overflow > 0) this.entries.splice(0, overflow);
    if (this.latestId !== before)
      for (const listener of this.listeners) listener(this, before, this.latestId);
  }

  private append(event: DeltaEvent, project: string | undefined): void {
    this.latestId++;
    this.entries.push({ id: this.latestId, event: { eventId: this.latestId, ...event }, project });
  }
}

/** Whether an item differs from the last payload's: the same object is unchanged, else by JSON. */
function changed<T>(known: Known<T>, now: Known<T>): boolean {
  if (known.item === now.item) {
    now.json = known.json;
    return false;
  }
  known.json ??= JSON.stringify(known.item);
  now.json = JSON.stringify(now.item);
  return known.json !== now.json;
}

/**
 * The change log of each environment state, made when a delta or streaming client first asks for
 * it (an environment nobody streams from costs no comparisons) and fed by the state's updates from
 * then on. Kept by the app, so two apps in one process share nothing.
 */
export class ChangeLogs {
  private readonly logs = new WeakMap<EnvironmentState, ChangeLog>();
  private readonly listeners: ChangeListener[] = [];

  constructor(
    private readonly options: { readonly retained: number; readonly now?: () => number },
  ) {}

  /** The log of `state`, which must hold a snapshot (requests get here after readiness). */
  of(state: EnvironmentState): ChangeLog {
    let log = this.logs.get(state);
    if (log === undefined) {
      const current = state.serving();
      const created = new ChangeLog(current.payload, {
        retained: this.options.retained,
        startMs: (this.options.now ?? Date.now)(),
      });
      created.onChange((changed, after, latest) => {
        for (const listener of this.listeners) listener(changed, after, latest);
      });
      state.onUpdate((compiled) => created.record(compiled.payload));
      this.logs.set(state, created);
      log = created;
    }
    return log;
  }

  /** Calls `listener` after every change of every log (made before or after this call). */
  onChange(listener: ChangeListener): void {
    this.listeners.push(listener);
  }
}
