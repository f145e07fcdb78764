import type { Context } from '@flags/schemas';
import { type ContextDefaults, QueryFields } from '@flags/serving';
import decodeComponent from 'fast-decode-uri-component';

const AMPERSAND = 0x26;
const EQUALS = 0x3d;
const PLUS = 0x2b;
const PERCENT = 0x25;

/** `properties[` and `]` as browsers and `URLSearchParams` send them: percent-encoded. */
const ENCODED_OPEN = 'properties%5';
const ENCODED_OPEN_LENGTH = ENCODED_OPEN.length + 1;
const ENCODED_CLOSE_LENGTH = 3;

/**
 * The context in the query string of `GET /proxy` (the text after `?`), read in one pass: the
 * context `contextFromQuery` builds from the query as Fastify parses it (fast-querystring: pairs
 * split at `&` and the first `=`, `+` read as a space, percent escapes decoded unless malformed, a
 * key without `=` given the empty value), without building that query object first, and without
 * decoding the keys `properties%5Bname%5D` that SDKs send for every property. Written by hand
 * because it runs for every never-seen context, where parsing took about a tenth of the request's
 * CPU. Throws a `BAD_CONTEXT` error where the routes answer 400 (a repeated parameter).
 */
export function contextFromQueryString(
  text: string,
  ip: string,
  defaults: ContextDefaults,
): Context {
  const fields = new QueryFields();
  const length = text.length;
  let start = 0;
  let equals = -1;
  let keyPercents = 0;
  let keyPlus = false;
  let valueEscaped = false;
  let valuePlus = false;
  for (let i = 0; i <= length; i++) {
    const c = i === length ? AMPERSAND : text.charCodeAt(i);
    if (c === AMPERSAND) {
      const keyEnd = equals < 0 ? i : equals;
      if (equals >= 0 || keyEnd > start) {
        const value = equals < 0 ? '' : decoded(text.slice(equals + 1, i), valuePlus, valueEscaped);
        if (!keyPlus && keyPercents === 2 && isEncodedProperty(text, start, keyEnd)) {
          fields.addProperty(
            text.slice(start + ENCODED_OPEN_LENGTH, keyEnd - ENCODED_CLOSE_LENGTH),
            value,
          );
        } else fields.add(decoded(text.slice(start, keyEnd), keyPlus, keyPercents > 0), value);
      }
      start = i + 1;
      equals = -1;
      keyPercents = 0;
      keyPlus = false;
      valueEscaped = false;
      valuePlus = false;
    } else if (c === EQUALS) {
      if (equals < 0) equals = i;
    } else if (c === PLUS) {
      if (equals < 0) keyPlus = true;
      else valuePlus = true;
    } else if (c === PERCENT) {
      if (equals < 0) keyPercents++;
      else valueEscaped = true;
    }
  }
  return fields.finish(ip, defaults);
}

/** A part of a query as fast-querystring decodes it: `+` a space, then escapes (kept if bad). */
function decoded(part: string, plus: boolean, escaped: boolean): string {
  let out = plus ? part.replaceAll('+', ' ') : part;
  if (escaped) out = decodeComponent(out) || out;
  return out;
}

/**
 * Whether `text[start, end)`, holding exactly two `%`, is `properties%5B<name>%5D` (hex digits in
 * either case): then `<name>` holds no escape and is the property's name as it is.
 */
function isEncodedProperty(text: string, start: number, end: number): boolean {
  if (end - start < ENCODED_OPEN_LENGTH + ENCODED_CLOSE_LENGTH) return false;
  if (!text.startsWith(ENCODED_OPEN, start)) return false;
  const open = text.charCodeAt(start + ENCODED_OPEN.length) | 0x20;
  const close = text.charCodeAt(end - 1) | 0x20;
  return (
    open === 0x62 && // b
    close === 0x64 && // d
    text.charCodeAt(end - 3) === PERCENT &&
    text.charCodeAt(end - 2) === 0x35 // 5
  );
}
