import type { Context } from '@flags/schemas';
import { type ServingError, servingError } from '../errors.js';

/** Top-level context fields of a body; any other top-level field is a property. */
const KNOWN = new Set([
  'appName',
  'environment',
  'userId',
  'sessionId',
  'remoteAddress',
  'currentTime',
  'properties',
]);
/** Names that must never become keys (prototype pollution). */
const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype']);

export interface ContextDefaults {
  readonly appName: string;
  /** The configured `environment`: when set it overrides the caller's. */
  readonly environment: string | undefined;
  /** `ignoreCallerRemoteAddress`: the request address always, never the caller's `remoteAddress`. */
  readonly ignoreCallerRemoteAddress: boolean;
}

type Properties = Record<string, string | undefined>;

function newProperties(): Properties {
  return Object.create(null) as Properties;
}

function scalar(value: unknown, field: string): string | undefined {
  if (typeof value === 'string') return value === '' ? undefined : value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value === null || value === undefined) return undefined;
  throw servingError('BAD_CONTEXT', [`context field "${field}" must be a string`]);
}

function parseTime(value: string | undefined): Date | undefined {
  if (value === undefined) return undefined;
  const date = new Date(/^\d+$/.test(value) ? Number(value) : value);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

function finish(
  context: Context,
  time: string | undefined,
  properties: Properties | undefined,
  rest: Properties | undefined,
  ip: string,
  defaults: ContextDefaults,
): Context {
  // Explicit `properties.x` wins over a top-level `x` (Unleash Proxy's rule).
  if (rest !== undefined) {
    properties ??= newProperties();
    for (const key in rest) if (properties[key] === undefined) properties[key] = rest[key];
  }
  const currentTime = parseTime(time);
  if (currentTime !== undefined) context.currentTime = currentTime;
  context.properties = properties ?? newProperties();
  context.appName ??= defaults.appName;
  context.environment = defaults.environment ?? context.environment ?? 'default';
  // A caller-supplied address wins over the socket (or trusted forwarded) address, as in Unleash
  // Proxy, unless `ignoreCallerRemoteAddress`: then IP-restricted flags see only the request's.
  if (defaults.ignoreCallerRemoteAddress || context.remoteAddress === undefined)
    context.remoteAddress = ip;
  return context;
}

function setKnown(context: Context, key: string, value: string | undefined): void {
  if (value === undefined) return;
  switch (key) {
    case 'appName':
      context.appName = value;
      break;
    case 'environment':
      context.environment = value;
      break;
    case 'userId':
      context.userId = value;
      break;
    case 'sessionId':
      context.sessionId = value;
      break;
    case 'remoteAddress':
      context.remoteAddress = value;
      break;
  }
}

/** The bit of each top-level field in `QueryFields.given`; 0 for any other parameter. */
function knownBit(key: string): number {
  switch (key) {
    case 'appName':
      return 1;
    case 'environment':
      return 2;
    case 'userId':
      return 4;
    case 'sessionId':
      return 8;
    case 'remoteAddress':
      return 16;
    case 'currentTime':
      return 32;
    default:
      return 0;
  }
}

function repeated(key: string): ServingError {
  return servingError('BAD_CONTEXT', [`query parameter "${key}" must be given once`]);
}

/**
 * A context as query parameters give it, one decoded parameter at a time: known fields at the top,
 * `properties[name]=value` and every other parameter as properties; an empty value is no value,
 * and a repeated parameter is a 400 (`BAD_CONTEXT`).
 */
export class QueryFields {
  private readonly context: Context = {};
  private properties: Properties | undefined;
  private rest: Properties | undefined;
  private time: string | undefined;
  /** The known fields given so far (`knownBit`). */
  private given = 0;
  /** Parameters given but not kept (empty, or a forbidden name), by key: a repeat is still a 400. */
  private dropped: Properties | undefined;

  /** The parameter `key` with the value `raw`. */
  add(key: string, raw: string): void {
    if (key.startsWith('properties[') && key.endsWith(']')) {
      this.addProperty(key.slice(11, -1), raw);
      return;
    }
    if (key === 'properties') {
      throw servingError('BAD_CONTEXT', ['"properties" must be given as properties[name]=value']);
    }
    const value = raw === '' ? undefined : raw;
    const bit = knownBit(key);
    if (bit !== 0) {
      if ((this.given & bit) !== 0) throw repeated(key);
      this.given |= bit;
      if (key === 'currentTime') this.time = value;
      else setKnown(this.context, key, value);
    } else if (this.rest?.[key] !== undefined || this.dropped?.[key] !== undefined) {
      throw repeated(key);
    } else if (FORBIDDEN.has(key) || value === undefined) {
      this.drop(key);
    } else {
      this.rest ??= newProperties();
      this.rest[key] = value;
    }
  }

  /** The parameter `properties[name]` with the value `raw`. */
  addProperty(name: string, raw: string): void {
    if (
      this.properties?.[name] !== undefined ||
      (this.dropped !== undefined && this.dropped[`properties[${name}]`] !== undefined)
    )
      throw repeated(`properties[${name}]`);
    if (name === '' || FORBIDDEN.has(name) || raw === '') this.drop(`properties[${name}]`);
    else {
      this.properties ??= newProperties();
      this.properties[name] = raw;
    }
  }

  private drop(key: string): void {
    this.dropped ??= newProperties();
    this.dropped[key] = '';
  }

  /** The context of the parameters given, completed with the request's address and the defaults. */
  finish(ip: string, defaults: ContextDefaults): Context {
    return finish(this.context, this.time, this.properties, this.rest, ip, defaults);
  }
}

/**
 * Builds the engine context from a parsed query string (`GET /proxy`, see `QueryFields`); a
 * parameter the parser saw twice (an array) is a 400.
 */
export function contextFromQuery(
  query: Readonly<Record<string, string | string[] | undefined>>,
  ip: string,
  defaults: ContextDefaults,
): Context {
  const fields = new QueryFields();
  for (const key in query) {
    const raw = query[key];
    if (raw === undefined) continue;
    if (typeof raw !== 'string') throw repeated(key);
    fields.add(key, raw);
  }
  return fields.finish(ip, defaults);
}

/** Builds the engine context from a `POST /proxy` body's `context` object. */
export function contextFromBody(input: unknown, ip: string, defaults: ContextDefaults): Context {
  const context: Context = {};
  if (input === undefined || input === null)
    return finish(context, undefined, undefined, undefined, ip, defaults);
  if (typeof input !== 'object' || Array.isArray(input)) {
    throw servingError('BAD_CONTEXT', ['"context" must be an object']);
  }
  let properties: Properties | undefined;
  let rest: Properties | undefined;
  let time: string | undefined;
  const source = input as Record<string, unknown>;
  for (const key of Object.keys(source)) {
    const raw = source[key];
    if (key === 'properties') {
      if (raw === undefined || raw === null) continue;
      if (typeof raw !== 'object' || Array.isArray(raw)) {
        throw servingError('BAD_CONTEXT', ['"context.properties" must be an object of strings']);
      }
      properties ??= newProperties();
      for (const name of Object.keys(raw)) {
        if (FORBIDDEN.has(name)) continue;
        const value = scalar((raw as Record<string, unknown>)[name], `properties.${name}`);
        if (value !== undefined) properties[name] = value;
      }
    } else if (key === 'currentTime') {
      time = raw instanceof Date ? raw.toISOString() : scalar(raw, key);
    } else if (KNOWN.has(key)) {
      setKnown(context, key, scalar(raw, key));
    } else if (
      !FORBIDDEN.has(key) &&
      (typeof raw === 'string' || typeof raw === 'number' || typeof raw === 'boolean')
    ) {
      const value = scalar(raw, key);
      if (value === undefined) continue;
      rest ??= newProperties();
      rest[key] = value;
    }
  }
  return finish(context, time, properties, rest, ip, defaults);
}
