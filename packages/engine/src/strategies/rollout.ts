import type { ContextReader } from '../context.js';
import { contextReader } from '../context.js';
import { type HashPrefix, normalizedValue, prepareHash, ROLLOUT_SEED } from '../hash/murmur3.js';
import type { Predicate } from '../operators/operator.js';
import {
  ALWAYS,
  NEVER,
  type Parameters,
  randomBucket,
  type StrategyBuilder,
  type StrategyEnvironment,
  textParameter,
} from './strategy.js';

/**
 * Percentage rollouts: `flexibleRollout` and the older `gradualRollout*` strategies. A context
 * is in when `murmur3(groupId + ':' + id) % 100 + 1 <= percentage`.
 */

function percentage(
  parameters: Parameters,
  name: string,
  environment: StrategyEnvironment,
): number {
  const text = textParameter(parameters, name);
  const value = Number(text);
  if (text === undefined || Number.isNaN(value)) {
    environment.reporter.warn(`strategy parameter "${name}" is not a number: ${text}`);
    return 0;
  }
  return value;
}

/** A rollout keyed by one context field; a context without it (or with one over the limit) is out. */
function byField(
  read: ContextReader,
  rollout: number,
  environment: StrategyEnvironment,
): Predicate {
  const prefix = prepareHash(environment.groupPrefix, ROLLOUT_SEED);
  const { maxValueLength } = environment;
  return (context) => {
    const id = read(context);
    return !!id && id.length <= maxValueLength && normalizedValue(prefix, id, 100) <= rollout;
  };
}

function byRandom(rollout: number, random: () => number): Predicate {
  return () => randomBucket(random) <= rollout;
}

export const flexibleRollout: StrategyBuilder = (parameters, environment) => {
  const rollout = percentage(parameters, 'rollout', environment);
  const stickiness = textParameter(parameters, 'stickiness') || 'default';
  const { groupPrefix, random, maxValueLength } = environment;
  if (rollout <= 0) return NEVER;
  const everyone = rollout >= 100;
  if (stickiness === 'random') return everyone ? ALWAYS : byRandom(rollout, random);
  if (stickiness !== 'default') return byField(contextReader(stickiness), rollout, environment);
  if (everyone) return ALWAYS; // userId, sessionId or a random id: always some bucket <= 100
  const prefix: HashPrefix = prepareHash(groupPrefix, ROLLOUT_SEED);
  return (context) => {
    const id = context.userId || context.sessionId;
    if (id && id.length > maxValueLength) return false;
    const bucket = id ? normalizedValue(prefix, id, 100) : randomBucket(random);
    return bucket <= rollout;
  };
};

/** `gradualRolloutUserId` / `gradualRolloutSessionId`: a `percentage` of one context field. */
function gradualRollout(read: ContextReader): StrategyBuilder {
  return (parameters, environment) => {
    const rollout = percentage(parameters, 'percentage', environment);
    if (rollout <= 0) return NEVER;
    return byField(read, rollout, environment);
  };
}

export const gradualRolloutUserId = gradualRollout((context) => context.userId);
export const gradualRolloutSessionId = gradualRollout((context) => context.sessionId);

export const gradualRolloutRandom: StrategyBuilder = (parameters, environment) => {
  const rollout = percentage(parameters, 'percentage', environment);
  return byRandom(rollout, environment.random);
};
