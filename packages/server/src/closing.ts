import type { FastifyInstance } from 'fastify';
import { ApiError, errorBody } from './errors.js';

/**
 * Once shutdown begins, a request that still arrives (on a connection that was busy, so closing
 * did not drop it with the idle ones) gets 503 in the error shape, with `Connection: close` so the
 * client sends the next one elsewhere. The app must be built with `return503OnClosing: false`.
 */
export function refuseWhileClosing(app: FastifyInstance): void {
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  app.addHook('onRequest', (_request, reply, done) => {
    if (!closing) return done();
    void reply
      .status(503)
      .header('connection', 'close')
      .type('application/json')
      .send(errorBody(new ApiError('SHUTTING_DOWN')));
  });
}
