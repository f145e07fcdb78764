import type { ClientFeatures } from '@flags/schemas';
import type { EnvironmentState } from '@flags/serving';
import { allProjects } from '../auth/unleash-token.js';
import type { UsageAggregator } from '../usage/aggregator.js';
import type { FeedSync } from './feed-sync.js';
import type { PayloadTarget } from './poller.js';

/** One client token an environment syncs with, and what it last fetched. */
class Feed implements PayloadTarget {
  payload: ClientFeatures | undefined;
  lastUpdateMs = 0;
  /** Resolves with the feed's first payload. */
  readonly fetched: Promise<void>;
  private resolveFetched!: () => void;

  constructor(
    readonly token: string,
    /** The projects the token reads; `undefined` until known (a `[]` token before validation). */
    readonly projects: readonly string[] | undefined,
    private readonly environment: Environment,
  ) {
    this.fetched = new Promise((resolve) => {
      this.resolveFetched = resolve;
    });
  }

  get ready(): boolean {
    return this.environment.state.ready;
  }

  update(payload: ClientFeatures): void {
    this.payload = payload;
    this.environment.combine();
    this.resolveFetched();
    // The environment's own time of the change: its poller's last check is never earlier.
    this.lastUpdateMs = this.environment.state.lastUpdateMs;
  }
}

/** What `/internal-backstage/tokens` shows of one feed: its token and how its sync goes. */
export interface FeedStatus {
  readonly token: string;
  /** `undefined` until known (a `[]` token before validation). */
  readonly projects: readonly string[] | undefined;
  /** Epoch ms of the feed's last new payload (0: none yet). */
  readonly lastUpdateMs: number;
  /** The `meta.revisionId` of its last payload, when the upstream sends one. */
  readonly revisionId: number | undefined;
  /** Epoch ms of its last successful upstream check: a poll's 200 or 304, a stream's event or keep-alive (0: none yet). */
  readonly lastCheckMs: number;
  /** How it syncs now (`FeedSync.mode`). */
  readonly sync: 'streaming' | 'polling';
  /** The upstream refused its token (401/403) at the last poll. */
  readonly refused: boolean;
  /** Failures in a row, as Unleash Edge counts them (`FeedSync.failureCount`). */
  readonly failureCount: number;
}

/** Makes the sync (stream or poller) of one feed: the token to sync with, and where to put what it fetches. */
export type PollerFactory = (token: string, target: PayloadTarget, environment: string) => FeedSync;

/**
 * One environment the proxy serves: its compiled state and the pollers feeding it, one per client
 * token that is not covered by a broader one (a `*` token covers every project). Several feeds are
 * merged into one payload (features by name, segments by id), as one environment's configuration.
 */
export class Environment {
  private readonly feeds: Array<{ feed: Feed; poller: FeedSync }> = [];
  private started = false;
  private readonly firstSync: Promise<void>;
  private resolveFirstSync!: () => void;

  constructor(
    readonly name: string,
    readonly state: EnvironmentState,
    private readonly pollerFor: PollerFactory,
    /** Synced because a startup token names it (readiness waits for it). */
    readonly startup: boolean,
    /**
     * The environment's usage metrics: its snapshots' evaluations and the reports sent with its
     * keys; `undefined` when usage metrics are off.
     */
    readonly usage?: UsageAggregator,
  ) {
    this.firstSync = new Promise((resolve) => {
      this.resolveFirstSync = resolve;
    });
    if (state.ready) this.resolveFirstSync();
    else state.onUpdate(() => this.resolveFirstSync());
  }

  /** Resolves once the environment holds a snapshot (from upstream, backup or bootstrap). */
  get ready(): Promise<void> {
    return this.firstSync;
  }

  /** The first feed's poller (its `lastCheckMs`, `ready`); every environment has one. */
  get poller(): FeedSync {
    return (this.feeds[0] as { poller: FeedSync }).poller;
  }

  /** Its client tokens, in the order they were added (the first one sends its usage metrics). */
  get tokens(): readonly string[] {
    return this.feeds.map(({ feed }) => feed.token);
  }

  /** Every feed's token and sync times. */
  feedStatuses(): FeedStatus[] {
    return this.feeds.map(({ feed, poller }) => ({
      token: feed.token,
      projects: feed.projects,
      lastUpdateMs: feed.lastUpdateMs,
      revisionId: feed.payload?.meta?.revisionId,
      lastCheckMs: poller.lastCheckMs,
      sync: poller.mode,
      refused: poller.refused,
      failureCount: poller.failureCount,
    }));
  }

  /** The upstream refuses every token of the environment (401/403 at their last poll). */
  get refused(): boolean {
    return this.feeds.length > 0 && this.feeds.every(({ poller }) => poller.refused);
  }

  /** Epoch ms of the last successful upstream check of any feed (0: none yet). */
  get lastCheckMs(): number {
    return Math.max(0, ...this.feeds.map(({ poller }) => poller.lastCheckMs));
  }

  /**
   * Syncs with `token` too, unless a feed already reads every project it reads. Returns whether a
   * feed was added.
   */
  addToken(token: string, projects: readonly string[] | undefined): boolean {
    if (this.feeds.some(({ feed }) => feed.token === token || covers(feed.projects, projects)))
      return false;
    const feed = new Feed(token, projects, this);
    const poller = this.pollerFor(token, feed, this.name);
    this.feeds.push({ feed, poller });
    if (this.started) poller.start();
    return true;
  }

  /** Whether a feed reads every project in `projects` (fetched or not yet). */
  reads(projects: readonly string[]): boolean {
    return this.feeds.some(({ feed }) => covers(feed.projects, projects));
  }

  /**
   * Whether the state holds every project in `projects`: a feed reading them has fetched. Before
   * any feed has fetched, the state is a backup's or a bootstrap's (or there is none), and what
   * it holds is all there is.
   */
  syncs(projects: readonly string[]): boolean {
    let fetched = false;
    for (const { feed } of this.feeds) {
      if (feed.payload === undefined) continue;
      if (covers(feed.projects, projects)) return true;
      fetched = true;
    }
    return !fetched;
  }

  /** Resolves once `syncs(projects)`; never while no feed `reads` them. */
  synced(projects: readonly string[]): Promise<void> {
    if (this.syncs(projects)) return Promise.resolve();
    const covering = this.feeds.filter(({ feed }) => covers(feed.projects, projects));
    return Promise.race(covering.map(({ feed }) => feed.fetched));
  }

  /**
   * Stops syncing with `token` (revoked upstream); the environment keeps what it has. Returns
   * whether any feed is left.
   */
  removeToken(token: string): boolean {
    const index = this.feeds.findIndex(({ feed }) => feed.token === token);
    if (index !== -1) {
      this.feeds[index]?.poller.stop();
      this.feeds.splice(index, 1);
    }
    return this.feeds.length > 0;
  }

  start(): void {
    this.started = true;
    for (const { poller } of this.feeds) poller.start();
  }

  stop(): void {
    this.started = false;
    for (const { poller } of this.feeds) poller.stop();
  }

  async idle(): Promise<void> {
    await Promise.all(this.feeds.map(({ poller }) => poller.idle()));
  }

  /** Puts the feeds' payloads together into the environment's state (each feed's own when alone). */
  combine(): void {
    const payloads = this.feeds.flatMap(({ feed }) => (feed.payload ? [feed.payload] : []));
    if (payloads.length === 0) return;
    this.state.update(payloads.length === 1 ? (payloads[0] as ClientFeatures) : merge(payloads));
  }
}

/** Whether a feed reading `have` reads everything a token reading `want` would. */
function covers(have: readonly string[] | undefined, want: readonly string[] | undefined): boolean {
  if (have === undefined) return false;
  if (allProjects(have)) return true;
  return want !== undefined && !allProjects(want) && want.every((p) => have.includes(p));
}

function merge(payloads: readonly ClientFeatures[]): ClientFeatures {
  const features = new Map<string, ClientFeatures['features'][number]>();
  const segments = new Map<number, NonNullable<ClientFeatures['segments']>[number]>();
  for (const payload of payloads) {
    for (const feature of payload.features)
      if (!features.has(feature.name)) features.set(feature.name, feature);
    for (const segment of payload.segments ?? [])
      if (!segments.has(segment.id)) segments.set(segment.id, segment);
  }
  const first = payloads[0] as ClientFeatures;
  return {
    ...first,
    features: [...features.values()],
    ...(segments.size > 0 ? { segments: [...segments.values()] } : {}),
  };
}

export interface EnvironmentsOptions {
  /**
   * The usage metrics of a new environment, first synced with `token`; none: usage metrics are
   * off.
   */
  readonly usageFor?: (environment: string, token: string) => UsageAggregator | undefined;
  /** A new, empty state for an environment, counting into `usage`. */
  readonly stateFor: (environment: string, usage: UsageAggregator | undefined) => EnvironmentState;
  readonly pollerFor: PollerFactory;
  /** Runs for every environment added after the start (dynamic), e.g. to load its backup. */
  readonly onAdded?: (environment: Environment) => void;
}

/**
 * Every environment the proxy serves, by name. The startup tokens' environments exist from the
 * start; `add` brings in one a validated client token names (unless tokens are strict). The first
 * startup environment is the default: plain client keys are served from it.
 */
export class Environments {
  private readonly byName = new Map<string, Environment>();
  private started = false;
  private first: Environment | undefined;
  /** Latched: a snapshot is never taken away, so once ready, always ready. */
  private allReady = false;

  constructor(private readonly options: EnvironmentsOptions) {}

  /** The environment of the first startup token (kept: every plain-key request asks for it). */
  get default(): Environment {
    return this.first as Environment;
  }

  get(name: string): Environment | undefined {
    return this.byName.get(name);
  }

  all(): Environment[] {
    return [...this.byName.values()];
  }

  /**
   * Every startup environment holds a snapshot, or the upstream refuses its token, and one at
   * least holds a snapshot: an environment that never syncs does not hold up the others (its
   * requests get 503 on their own, see `Authorizer`), but a proxy with nothing to serve is not ready.
   */
  get ready(): boolean {
    if (this.allReady) return true;
    let serving = false;
    for (const environment of this.byName.values()) {
      if (!environment.startup) continue;
      if (environment.state.ready) serving = true;
      else if (!environment.refused) return false;
    }
    if (!serving) return false;
    this.allReady = true;
    return true;
  }

  /** The environment `name`, created (and syncing, once started) if new; `token` is added to its feeds. */
  add(
    name: string,
    token: string,
    projects: readonly string[] | undefined,
    startup = false,
  ): Environment {
    let environment = this.byName.get(name);
    const added = environment === undefined;
    if (environment === undefined) {
      const usage = this.options.usageFor?.(name, token);
      environment = new Environment(
        name,
        this.options.stateFor(name, usage),
        this.options.pollerFor,
        startup,
        usage,
      );
      this.byName.set(name, environment);
      this.first ??= environment;
    }
    environment.addToken(token, projects);
    if (added && this.started) {
      this.options.onAdded?.(environment);
      environment.start();
    }
    return environment;
  }

  /**
   * Drops the feeds of tokens that are no longer valid (`stillValid`), and an environment that
   * client tokens brought in once none of them is left, as Edge empties an environment no token
   * covers any more. Startup environments stay (and their startup tokens are never validated, so
   * never dropped): the operator configured them.
   */
  prune(stillValid: (token: string) => boolean): void {
    for (const environment of this.byName.values()) {
      for (const token of environment.tokens) {
        if (stillValid(token) || environment.removeToken(token) || environment.startup) continue;
        environment.stop();
        this.byName.delete(environment.name);
      }
    }
  }

  start(): void {
    this.started = true;
    for (const environment of this.byName.values()) environment.start();
  }

  stop(): void {
    this.started = false;
    for (const environment of this.byName.values()) environment.stop();
  }

  async idle(): Promise<void> {
    await Promise.all(this.all().map((environment) => environment.idle()));
  }
}
