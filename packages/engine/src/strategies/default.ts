import { ALWAYS, type StrategyBuilder } from './strategy.js';

/** `default`: on for everyone (its constraints and segments still apply). */
export const defaultStrategy: StrategyBuilder = () => ALWAYS;
