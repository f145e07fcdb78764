import { listParameter, NEVER, type StrategyBuilder } from './strategy.js';

/**
 * `applicationHostname`: on when this process's host name (`CompileOptions.hostname`, given by
 * the caller because the engine does no IO) is in `hostNames`, compared in lowercase.
 */
export const applicationHostname: StrategyBuilder = (parameters, environment) => {
  const hostname = environment.hostname?.toLowerCase();
  const text = listParameter(parameters, 'hostNames').join(',').toLowerCase();
  const enabled = hostname !== undefined && text.split(',').includes(hostname);
  return enabled ? () => true : NEVER;
};
