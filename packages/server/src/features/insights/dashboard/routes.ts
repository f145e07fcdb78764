import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../../errors.js';
import { dashboardCsp, dashboardHtml } from './page.js';

/**
 * `GET /insights`: the dashboard page. It carries no data, so it needs no token; its script takes
 * one from the form or from a `/insights#token=…` link and calls `/api/admin/insights` with it
 * in the `Authorization` header; without a token it calls it with the browser's login session, if
 * any. A token in the query string is refused: request lines carry the
 * query into server, proxy and browser-history logs.
 */
export function dashboardRoutes(app: FastifyInstance): void {
  app.get('/insights', async function dashboardGetPage(request, reply) {
    if ((request.query as Record<string, unknown>).token !== undefined) {
      throw new ApiError(
        'BAD_DATA',
        'The admin token does not belong in the query string, where logs keep it: open /insights#token=<token> instead, or paste the token into the page.',
      );
    }
    return (
      reply
        .type('text/html; charset=utf-8')
        .header('content-security-policy', dashboardCsp)
        // Nothing of this page's address is for other sites.
        .header('referrer-policy', 'no-referrer')
        .header('cache-control', 'no-cache')
        .send(dashboardHtml)
    );
  });
}
