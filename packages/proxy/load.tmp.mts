import autocannon from 'autocannon';
import { realisticContexts } from './test/fixtures/realistic.ts';
const [url, method = 'GET', dur = '5'] = process.argv.slice(2);
const requests = realisticContexts(500).map((context) => {
  if (method === 'POST') return { method: 'POST', path: '/proxy', headers: { authorization: 'k', 'content-type': 'application/json' }, body: JSON.stringify({ context }) };
  const query = new URLSearchParams({ userId: context.userId, sessionId: context.sessionId, remoteAddress: context.remoteAddress });
  for (const [name, value] of Object.entries(context.properties)) query.append(`properties[${name}]`, value as string);
  return { method: 'GET', path: `/proxy?${query}`, headers: { authorization: 'k' } };
});
const r = await autocannon({ url, connections: 32, duration: Number(dur), requests });
console.log(method, Math.round(r.requests.average), 'req/s', r.non2xx, 'non2xx');
