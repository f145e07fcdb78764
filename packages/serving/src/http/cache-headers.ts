import { echoesOrigin } from './cors.js';
import type { ResolvedCors } from './cors-options.js';

/**
 * Cache headers of the answers a key unlocks, built once per app. Evaluation answers keep
 * `Cache-control: public, max-age=2` (the proxy document fixes it), and `public` lets a shared
 * cache store an answer to a request that carried credentials (RFC 9111 §3.5). So each answer
 * names, in `Vary`, every request header that carries a key: a CDN then keeps its copies per key,
 * and a caller without one is never served an answer that needed one. With an origin list, CORS
 * echoes the request's `Origin`, which selects the answer too.
 */
export interface KeyedAnswerHeaders {
  /** `GET`/`POST /proxy` and `/proxy/all`, 200 and 304 alike (304 drops the content type). */
  readonly evaluation: Readonly<Record<string, string>>;
  /** `Vary` of OFREP answers, whose key may come in three headers. */
  readonly ofrepVary: string;
  /**
   * `/proxy/client/features`: the whole configuration (strategies, user ids, IP ranges), which
   * only the caller's own cache may keep.
   */
  readonly serverSide: Readonly<Record<string, string>>;
}

/** `x-client-key` → `X-Client-Key`: header names as they are usually written. */
function headerLabel(name: string): string {
  return name
    .split('-')
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('-');
}

/** A `Vary` value: `Origin` first when CORS echoes it, then the given names, each once. */
function vary(cors: ResolvedCors, names: readonly string[]): string {
  const labels = names.map((name) => headerLabel(name.toLowerCase()));
  if (echoesOrigin(cors)) labels.unshift('Origin');
  return [...new Set(labels)].join(', ');
}

/**
 * The headers of keyed answers for the configured key header (`clientKeysHeaderName`, lowercase)
 * and CORS settings.
 */
export function keyedAnswerHeaders(keyHeader: string, cors: ResolvedCors): KeyedAnswerHeaders {
  return {
    evaluation: Object.freeze({
      'content-type': 'application/json; charset=utf-8',
      // Spelled as Unleash Proxy sends it.
      'Cache-control': 'public, max-age=2',
      vary: vary(cors, ['accept-encoding', keyHeader]),
    }),
    ofrepVary: vary(cors, [keyHeader, 'authorization', 'x-api-key']),
    serverSide: Object.freeze({
      'Cache-control': 'private, max-age=2',
      vary: vary(cors, [keyHeader]),
    }),
  };
}
