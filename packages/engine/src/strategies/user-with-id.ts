import { listParameter, type StrategyBuilder } from './strategy.js';

/**
 * `userWithId`: the context's userId is in the `userIds` list (a Set built once). Ids over the
 * value limit are left out of the Set, so a userId over it never matches.
 */
export const userWithId: StrategyBuilder = (parameters, environment) => {
  const { maxValueLength } = environment;
  const userIds = new Set(
    listParameter(parameters, 'userIds').filter((id) => id.length <= maxValueLength),
  );
  return (context) => context.userId !== undefined && userIds.has(context.userId);
};
