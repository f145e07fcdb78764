import { applicationHostname } from './application-hostname.js';
import { defaultStrategy } from './default.js';
import { remoteAddress } from './remote-address.js';
import {
  flexibleRollout,
  gradualRolloutRandom,
  gradualRolloutSessionId,
  gradualRolloutUserId,
} from './rollout.js';
import type { StrategyBuilder } from './strategy.js';
import { userWithId } from './user-with-id.js';

/** The built-in activation strategies of the client specification, by wire name (a constant table). */
export const BUILT_IN_STRATEGIES: ReadonlyMap<string, StrategyBuilder> = new Map([
  ['default', defaultStrategy],
  ['flexibleRollout', flexibleRollout],
  ['gradualRolloutUserId', gradualRolloutUserId],
  ['gradualRolloutSessionId', gradualRolloutSessionId],
  ['gradualRolloutRandom', gradualRolloutRandom],
  ['userWithId', userWithId],
  ['remoteAddress', remoteAddress],
  ['applicationHostname', applicationHostname],
]);
