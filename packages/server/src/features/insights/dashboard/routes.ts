import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../../errors.js';
import { DEFAULT_UI_DIR, readAsset, UI_NOT_BUILT } from '../../ui/routes.js';
import { dashboardPage } from './page.js';

/**
 * `GET /insights`: the dashboard page. It carries no data, so it needs no token; its script takes
 * one from the form or from a `/insights#token=…` link and calls `/api/admin/insights` with it
 * in the `Authorization` header; without a token it calls it with the browser's login session, if
 * any. A token in the query string is refused: request lines carry the
 * query into server, proxy and browser-history logs. The script is the web UI's `dashboard.js`
 * (its charts are the UI's), read from `uiDir` when the app is built; without it, the page says
 * how to build it.
 */
export function dashboardRoutes(app: FastifyInstance, uiDir: string = DEFAULT_UI_DIR): void {
  const script = readAsset(uiDir, 'dashboard.js', 'text/javascript; charset=utf-8');
  const page = script === undefined ? undefined : dashboardPage(script.body.toString('utf8'));
  app.get('/insights', async function dashboardGetPage(request, reply) {
    if ((request.query as Record<string, unknown>).token !== undefined) {
      throw new ApiError(
        'BAD_DATA',
        'The admin token does not belong in the query string, where logs keep it: open /insights#token=<token> instead, or paste the token into the page.',
      );
    }
    void reply
      .type('text/html; charset=utf-8')
      // Nothing of this page's address is for other sites.
      .header('referrer-policy', 'no-referrer')
      .header('cache-control', 'no-cache');
    if (page === undefined) return reply.status(503).send(UI_NOT_BUILT);
    return reply.header('content-security-policy', page.csp).send(page.html);
  });
}
