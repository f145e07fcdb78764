import type { IncomingHttpHeaders } from 'node:http';
import { instantMs } from '@flags/schemas';

/** An SDK instance (or an Edge) as `client_instances` records it. */
export interface SdkInstance {
  readonly appName: string;
  readonly instanceId: string;
  readonly connectionId: string | null;
  readonly sdkVersion: string | null;
  /** Undefined: not reported (the application's stored list stays). */
  readonly strategies: readonly string[] | undefined;
  readonly started: string | null;
  readonly intervalMs: number | null;
}

/** What a registration, a metrics report or a bulk report's application says of its sender. */
export interface SdkInstanceFields {
  readonly appName: string;
  readonly instanceId?: string | null | undefined;
  readonly connectionId?: string | null | undefined;
  readonly sdkVersion?: string | null | undefined;
  readonly strategies?: readonly string[] | undefined;
  readonly started?: string | number | undefined;
  readonly interval?: number | undefined;
}

/** The longest header value taken, as the body schemas' `maxLength`; longer ones are ignored. */
const MAX_HEADER_CHARS = 255;

/** The largest `integer` column value. */
const MAX_INTEGER = 2_147_483_647;

/** A header's value (the first, if repeated) when it is present, non-empty and not too long. */
export function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  const text = Array.isArray(value) ? value[0] : value;
  return text && text.length <= MAX_HEADER_CHARS ? text : undefined;
}

/** The longest `started` stored as sent: a date-time with an offset and nanoseconds fits. */
const MAX_STARTED_CHARS = 40;

/**
 * When the instance started, as sent; a longer date-time (the format allows any number of
 * fraction digits: issue 40 stored 500,000 of them) as the ISO string of its instant, or not at all.
 */
function startedText(started: string | number | undefined): string | null {
  if (started === undefined) return null;
  const text = String(started);
  if (text.length <= MAX_STARTED_CHARS) return text;
  const ms = instantMs(started);
  return Number.isNaN(ms) ? null : new Date(ms).toISOString();
}

/** Empty and null count as not sent (Unleash defaults an empty `instanceId` too). */
const given = (value: string | null | undefined) => (value ? value : undefined);

function intervalMs(body: number | undefined, header: string | undefined): number | null {
  if (body !== undefined) return Math.min(Math.round(body), MAX_INTEGER);
  return header && /^\d{1,10}$/.test(header) ? Math.min(Number(header), MAX_INTEGER) : null;
}

/**
 * The instance a registration or report describes: the body's fields, each one missing taken
 * from the headers SDKs and Unleash Edge send with every request (`UNLEASH-INSTANCEID`,
 * `UNLEASH-CONNECTION-ID`, `UNLEASH-SDK`, `Unleash-Interval`). Pass no headers for instances a
 * sender reports on behalf of others (a bulk report's applications): its headers are its own.
 */
export function sdkInstance(
  fields: SdkInstanceFields,
  headers: IncomingHttpHeaders = {},
): SdkInstance {
  return {
    appName: fields.appName,
    instanceId: given(fields.instanceId) ?? headerValue(headers, 'unleash-instanceid') ?? 'default',
    connectionId:
      given(fields.connectionId) ?? headerValue(headers, 'unleash-connection-id') ?? null,
    sdkVersion: given(fields.sdkVersion) ?? headerValue(headers, 'unleash-sdk') ?? null,
    strategies: fields.strategies,
    started: startedText(fields.started),
    intervalMs: intervalMs(fields.interval, headerValue(headers, 'unleash-interval')),
  };
}
