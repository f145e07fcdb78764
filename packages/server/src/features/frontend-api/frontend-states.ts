import type { CompiledState, EnvironmentState } from '@flags/serving';
import type {
  ClientFeaturesCache,
  ServedConfiguration,
} from '../client-api/client-features-cache.js';
import { everyProject } from '../client-api/client-features-store.js';

/** One environment's compiled state and the configuration it was compiled from. */
interface Fed {
  readonly state: EnvironmentState;
  /** The revision and ETag of the configuration last compiled (or found unchanged). */
  revision: number;
  etag: string | undefined;
}

/**
 * The frontend API's compiled snapshots: one `EnvironmentState` per environment (flags-proxy's, so both
 * services evaluate and serialize alike), fed from the client API's cache. A request's
 * configuration is looked up in that cache as a client API request's is; the state compiles it
 * only when its ETag differs from the one compiled last, i.e. once per change of the environment's
 * flags, never per request (and not for writes that leave the environment as it was).
 */
export class FrontendStates {
  private readonly byEnvironment = new Map<string, Fed>();

  constructor(
    private readonly cache: ClientFeaturesCache,
    /** A new, empty state for an environment (its compile options, answer cache and logging). */
    private readonly stateFor: (environment: string) => EnvironmentState,
  ) {}

  /** The snapshot that answers a token of `environment` and `projects` (`['*']`: all). */
  served(environment: string, projects: readonly string[]): CompiledState | Promise<CompiledState> {
    const configuration = this.cache.get(everyProject(environment));
    if (configuration instanceof Promise)
      return configuration.then((served) => this.narrowed(environment, served, projects));
    return this.narrowed(environment, configuration, projects);
  }

  private narrowed(
    environment: string,
    configuration: ServedConfiguration,
    projects: readonly string[],
  ): CompiledState {
    let fed = this.byEnvironment.get(environment);
    if (fed === undefined) {
      fed = { state: this.stateFor(environment), revision: -1, etag: undefined };
      this.byEnvironment.set(environment, fed);
    }
    // A configuration read before a newer one was compiled (a slow build) is not compiled again:
    // the newer one keeps answering.
    if (configuration.revision > fed.revision) {
      if (configuration.etag !== fed.etag) {
        fed.state.update(configuration.payload);
        fed.etag = configuration.etag;
      }
      fed.revision = configuration.revision;
    }
    // `forProjects` compiles each project set once per payload; the state holds a payload here.
    return fed.state.forProjects(projects) as CompiledState;
  }
}
