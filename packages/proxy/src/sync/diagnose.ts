import type { ProxyConfig } from '../config/load.js';

/** How the upstream answered the client-features URL, when that was no client-features payload. */
export interface FailedAnswer {
  readonly status: number;
  /** The answer is a web page (`text/html`, or a body opening with `<`). */
  readonly html: boolean;
}

/** How many `api` segments end the URL's path: 1 is right (`…/api/`). */
function trailingApis(url: URL): number {
  const segments = url.pathname.split('/').filter((segment) => segment !== '');
  let count = 0;
  while (segments.at(-1 - count) === 'api') count++;
  return count;
}

/** `url` without its trailing `api` segments and slash, plus `suffix` (`http://host:4242/api`). */
function rootOf(url: URL, suffix = ''): string {
  const segments = url.pathname.split('/').filter((segment) => segment !== '');
  while (segments.at(-1) === 'api') segments.pop();
  const path = segments.map((segment) => `/${segment}`).join('');
  return `${url.origin}${path}${suffix}`;
}

/**
 * The upstream URL's share in a failed client-features request, with the fix in the operator's
 * words (the option as written, STYLE habit 21), or `undefined` when the URL looks right (a 401 or
 * 403 then is the token's): a URL without `/api` or with it twice (Edge's `UPSTREAM_URL` is the
 * server's root, `/api` added) reaches no client API whatever the token; an HTML page, or 404 for
 * the path every Unleash API serves, means the URL is not an Unleash API at all.
 */
export function upstreamUrlProblem(
  config: ProxyConfig,
  featuresUrl: URL,
  answer: FailedAnswer,
): string | undefined {
  const { name, addsApi } = config.flagsUrlWritten;
  const what = answer.html ? `an HTML page (${answer.status})` : String(answer.status);
  const asked = `${featuresUrl.origin}${featuresUrl.pathname}`;
  const apis = trailingApis(config.flagsUrl);
  // An `api` segment elsewhere in the path is another server's layout (GitLab's
  // `/api/v4/feature_flags/unleash/<id>`): its 401 or 404 is not a missing `/api`.
  const apiInPath = config.flagsUrl.pathname.split('/').includes('api');
  if (apis === 0 && !apiInPath)
    return `upstream answered ${what} at ${asked}: ${name} has no /api, where Unleash's client API is: set ${name} to ${rootOf(config.flagsUrl, '/api')}`;
  if (apis > 1)
    return addsApi
      ? `upstream answered ${what} at ${asked}: ${name} ends in /api, and flags-proxy adds /api to it as Unleash Edge does: set ${name} to ${rootOf(config.flagsUrl)} (the server's root URL)`
      : `upstream answered ${what} at ${asked}: ${name} has /api twice: set ${name} to ${rootOf(config.flagsUrl, '/api')}`;
  if (apis === 0 || (!answer.html && answer.status !== 404)) return undefined;
  const example = addsApi
    ? "its root URL, as its SDKs' URL without /api (http://unleash:4242)"
    : 'the URL its SDKs use (http://unleash:4242/api)';
  return `upstream at ${rootOf(config.flagsUrl, addsApi ? '' : '/api')} is not an Unleash API (GET ${asked} answered ${what}): set ${name} to an Unleash server's, Unleash Edge's or flags-proxy's API, ${example}`;
}

/** Whether an answer is a web page rather than JSON. */
export function isHtml(contentType: string | string[] | undefined, body = ''): boolean {
  const type = Array.isArray(contentType) ? contentType[0] : contentType;
  return (type ?? '').toLowerCase().includes('text/html') || body.trimStart().startsWith('<');
}
