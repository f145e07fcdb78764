import { listParameter, type StrategyBuilder } from './strategy.js';

/** `userWithId`: the context's userId is in the `userIds` list (a Set built once). */
export const userWithId: StrategyBuilder = (parameters) => {
  const userIds = new Set(listParameter(parameters, 'userIds'));
  return (context) => context.userId !== undefined && userIds.has(context.userId);
};
