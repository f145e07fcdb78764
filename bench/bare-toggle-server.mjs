// The floor of the admin benchmark's toggle: a bare `node:http` server that answers each
// `POST …/features/:feature/environments/:environment/on|off` after one round trip to PostgreSQL
// doing the least a durable toggle does, in one transaction: the flag's row locked (its version
// bumped), its state in the environment written, an event and the revision written. Its database
// (DATABASE_URL) holds the tables `bench/admin.bench.ts` creates. Run as its own process; prints
// its port on stdout.
import { createServer } from 'node:http';
import pg from 'pg';

const TOGGLE = /\/features\/([^/]+)\/environments\/([^/]+)\/(on|off)$/;
const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
await client.connect();
const server = createServer((request, response) => {
  const match = TOGGLE.exec(request.url ?? '');
  request.resume();
  if (request.method !== 'POST' || !match) return void response.writeHead(404).end();
  const feature = client.escapeLiteral(decodeURIComponent(match[1]));
  const environment = client.escapeLiteral(decodeURIComponent(match[2]));
  const on = match[3] === 'on';
  // The simple protocol takes every statement in one message: one round trip.
  client
    .query(
      `BEGIN;
       UPDATE features SET version = version + 1 WHERE name = ${feature};
       INSERT INTO feature_environments VALUES (${feature}, ${environment}, ${on})
         ON CONFLICT (feature_name, environment) DO UPDATE SET enabled = excluded.enabled;
       INSERT INTO events (type, feature_name, environment)
         VALUES ('feature-environment-${on ? 'enabled' : 'disabled'}', ${feature}, ${environment});
       UPDATE revision SET config = config + 1 WHERE id = 1;
       COMMIT`,
    )
    .then(
      () => response.writeHead(200).end(),
      (error) => response.writeHead(500).end(String(error)),
    );
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`));
process.on('SIGTERM', () => server.close(() => void client.end()));
