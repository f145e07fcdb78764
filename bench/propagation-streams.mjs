// The SSE clients of the propagation benchmark, run in a worker thread: plain `node:http`
// connections to the proxy's `/api/client/streaming`, each parsing its frames and noting when the
// probe flag's state last changed.
import { Agent, request } from 'node:http';
import { parentPort, workerData } from 'node:worker_threads';

const { url, token, probe } = workerData;
const now = () => performance.timeOrigin + performance.now();

class Stream {
  hydrated = false;
  /** @type {boolean | undefined} */
  probeEnabled;
  changedAt = 0;
  text = '';

  /** @param {import('node:http').ClientRequest} request */
  constructor(request) {
    this.request = request;
  }

  receive(chunk, onChange) {
    this.text += chunk;
    for (let end = this.text.indexOf('\n\n'); end !== -1; end = this.text.indexOf('\n\n')) {
      const frame = this.text.slice(0, end);
      this.text = this.text.slice(end + 2);
      const data = frame
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trimStart())
        .join('\n');
      if (!data) continue;
      const { events } = JSON.parse(data);
      for (const event of events) this.apply(event);
      this.hydrated ||= events.some((event) => event.type === 'hydration');
      onChange();
    }
  }

  apply(event) {
    let enabled = this.probeEnabled;
    if (event.type === 'hydration')
      enabled = event.features?.find((feature) => feature.name === probe)?.enabled;
    else if (event.type === 'feature-updated' && event.feature?.name === probe)
      enabled = event.feature.enabled;
    else if (event.type === 'feature-removed' && event.featureName === probe) enabled = undefined;
    if (enabled !== this.probeEnabled) {
      this.probeEnabled = enabled;
      this.changedAt = now();
    }
  }
}

/** @type {Stream[]} */
const streams = [];
const agent = new Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY });
let waiters = [];
const recheck = () => {
  waiters = waiters.filter((done) => !done());
};

function openOne() {
  return new Promise((resolve, reject) => {
    const req = request(url, {
      agent,
      headers: { authorization: token, accept: 'text/event-stream' },
    });
    const stream = new Stream(req);
    req.on('response', (response) => {
      if (response.statusCode !== 200) {
        reject(new Error(`stream answered ${response.statusCode}`));
        response.resume();
        return;
      }
      response.setEncoding('utf8');
      response.on('data', (chunk) =>
        stream.receive(chunk, () => {
          if (stream.hydrated) resolve();
          recheck();
        }),
      );
    });
    req.on('error', reject);
    req.end();
    streams.push(stream);
  });
}

async function open(count) {
  while (streams.length < count) {
    const batch = Math.min(250, count - streams.length);
    await Promise.all(Array.from({ length: batch }, openOne));
  }
  return streams.length;
}

function arrivals(enabled) {
  return new Promise((resolve) => {
    const done = () => {
      if (!streams.every((stream) => stream.probeEnabled === enabled)) return false;
      resolve(streams.map((stream) => stream.changedAt));
      return true;
    };
    if (!done()) waiters.push(done);
  });
}

parentPort?.on('message', async (message) => {
  let value;
  if (message.command === 'open') value = await open(message.argument);
  else if (message.command === 'arrivals') value = await arrivals(message.argument);
  else if (message.command === 'close') {
    for (const stream of streams) stream.request.destroy();
    streams.length = 0;
  }
  parentPort?.postMessage({ id: message.id, value });
});
