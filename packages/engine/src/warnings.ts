import type { EngineWarning } from './types.js';

/** Where compile steps report odd data: the flag being compiled is attached to every message. */
export interface Reporter {
  warn(message: string): void;
}

export function flagReporter(
  flag: string | undefined,
  onWarning: ((warning: EngineWarning) => void) | undefined,
): Reporter {
  return {
    warn(message) {
      onWarning?.(flag === undefined ? { message } : { flag, message });
    },
  };
}

/** A short, safe rendering of an odd value for a warning message. */
export function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (Array.isArray(value)) return 'an array';
  if (value === null) return 'null';
  return typeof value === 'object' ? 'an object' : String(value);
}
