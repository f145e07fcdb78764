import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply } from 'fastify';

/**
 * The bundle `npm run build` writes (scripts/build-ui.ts). The same relative path from
 * `src/features/ui` and from `dist/features/ui`.
 */
export const DEFAULT_UI_DIR = fileURLToPath(new URL('../../../dist/ui/', import.meta.url));

/**
 * Nothing but this server's own files: no inline script or style, no frames, no plugins, forms
 * posting only here (the logout form).
 */
export const UI_CSP =
  "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'";

/** The page's paths (the UI routes in the browser; a reload of any of them gets the page). */
const PAGE_PATHS = [
  '/',
  '/signed-out',
  '/flags/:project/:feature',
  '/archive',
  '/segments',
  '/context-fields',
  '/projects',
  '/environments',
  '/api-tokens',
  '/users',
  '/tag-types',
  '/strategy-types',
  '/events',
  '/import-export',
  '/instance-insights',
  // The pages links open, without a session: invite and welcome links, reset links.
  '/new-user',
  '/reset-password',
];

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>flags</title>
  <link rel="icon" href="data:,">
  <link rel="stylesheet" href="/ui/style.css">
  <script type="module" src="/ui/app.js"></script>
</head>
<body>
  <div id="app"><noscript>The flags web UI needs JavaScript.</noscript></div>
</body>
</html>
`;

/** What a page of the web UI's bundle answers (503) when the bundle is not built. */
export const UI_NOT_BUILT = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>flags</title></head>
<body><h1>The web UI is not built</h1>
<p>Run <code>npm run build</code> in the repository, then reload. The admin API works without it.</p>
</body></html>
`;

export interface Asset {
  readonly body: Buffer;
  readonly type: string;
  readonly etag: string;
}

/** `file` of the bundle in `dir`, read once, with its ETag; `undefined` when not built. */
export function readAsset(dir: string, file: string, type: string): Asset | undefined {
  const path = `${dir}${file}`;
  if (!existsSync(path)) return undefined;
  const body = readFileSync(path);
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
  return { body, type, etag };
}

const secured = (reply: FastifyReply) =>
  reply
    .header('content-security-policy', UI_CSP)
    .header('referrer-policy', 'same-origin')
    .header('x-frame-options', 'DENY');

/**
 * The web UI: one page at `/` (and at the paths the UI routes to), its script and style sheet
 * under `/ui/`, read once from `uiDir` when the app is built. Everything it shows comes from the
 * admin API, with the session cookie. Without a bundle, the page says how to build it.
 */
export function uiRoutes(app: FastifyInstance, uiDir: string = DEFAULT_UI_DIR): void {
  const script = readAsset(uiDir, 'app.js', 'text/javascript; charset=utf-8');
  const style = readAsset(uiDir, 'style.css', 'text/css; charset=utf-8');
  const built = script !== undefined && style !== undefined;
  if (!built) app.log.warn(`the web UI is not built (no bundle in ${uiDir}): run npm run build`);

  for (const path of PAGE_PATHS) {
    app.get(path, async function uiGetPage(_request, reply) {
      return secured(reply)
        .status(built ? 200 : 503)
        .type('text/html; charset=utf-8')
        .header('cache-control', 'no-cache')
        .send(built ? PAGE : UI_NOT_BUILT);
    });
  }
  for (const [path, asset] of [
    ['/ui/app.js', script],
    ['/ui/style.css', style],
  ] as const) {
    if (asset === undefined) continue;
    app.get(path, async function uiGetAsset(request, reply) {
      secured(reply).header('cache-control', 'no-cache').header('etag', asset.etag);
      if (request.headers['if-none-match'] === asset.etag) return reply.status(304).send();
      return reply.type(asset.type).send(asset.body);
    });
  }
}
