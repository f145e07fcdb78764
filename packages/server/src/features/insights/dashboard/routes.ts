import type { FastifyInstance } from 'fastify';
import { dashboardCsp, dashboardHtml } from './page.js';

/**
 * `GET /insights`: the dashboard page. It carries no data, so it needs no token; its script asks
 * for one and calls `/api/admin/insights` with it.
 */
export function dashboardRoutes(app: FastifyInstance): void {
  app.get('/insights', async function dashboardGetPage(_request, reply) {
    return (
      reply
        .type('text/html; charset=utf-8')
        .header('content-security-policy', dashboardCsp)
        // The token may arrive as ?token=: never send this URL onwards.
        .header('referrer-policy', 'no-referrer')
        .header('cache-control', 'no-cache')
        .send(dashboardHtml)
    );
  });
}
