import type { Context } from './types.js';

/** Reads one context field as a string, or `undefined` when the context lacks it. */
export type ContextReader = (context: Context) => string | undefined;

/** Callers outside TypeScript may put numbers or null in `properties`; they read as the SDKs read them. */
export function asString(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  return value === undefined || value === null ? undefined : String(value);
}

/**
 * A reader for `name`, built once per constraint: the top-level fields of the context come first,
 * then `properties` (the lookup order of the Unleash SDKs).
 */
export function contextReader(name: string): ContextReader {
  switch (name) {
    case 'appName':
      return (context) => context.appName ?? asString(context.properties?.appName);
    case 'environment':
      return (context) => context.environment ?? asString(context.properties?.environment);
    case 'userId':
      return (context) => context.userId ?? asString(context.properties?.userId);
    case 'sessionId':
      return (context) => context.sessionId ?? asString(context.properties?.sessionId);
    case 'remoteAddress':
      return (context) => context.remoteAddress ?? asString(context.properties?.remoteAddress);
    case 'currentTime':
      return (context) =>
        context.currentTime?.toISOString() ?? asString(context.properties?.currentTime);
    default:
      return (context) => asString(context.properties?.[name]);
  }
}
