// The reference of the propagation benchmark's idle-stream figure: a bare `node:http` server that
// answers every request as an SSE stream (headers and one small hydration frame) and keeps the
// response until the client leaves. Run as its own process; prints its port on stdout.
import { createServer } from 'node:http';

const FRAME =
  'event: unleash-connected\nid: 1\ndata: {"events":[{"type":"hydration","eventId":1,"features":[],"segments":[]}]}\n\n';
const open = new Set();
const server = createServer((_request, response) => {
  response.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
  response.socket?.setTimeout(0);
  response.write(FRAME);
  open.add(response);
  response.once('close', () => open.delete(response));
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`));
