// The demo data of `npm start`, applied through flags-server's admin API like any user would.
import { readFileSync } from 'node:fs';

export const demoSegment = {
  name: 'premium-customers',
  description: 'Customers on the premium plan',
  constraints: [{ contextName: 'plan', operator: 'IN', values: ['premium'], inverted: false }],
};

/** The demo export (import request body) kept in the repository. */
export function demoImport(): {
  project: string;
  environment: string;
  data: Record<string, unknown[]> & { features: { name: string }[] };
} {
  return JSON.parse(readFileSync(new URL('./demo-flags.json', import.meta.url), 'utf8'));
}

export async function adminRequest(
  serverUrl: string,
  adminToken: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<unknown> {
  const headers: Record<string, string> = { authorization: adminToken };
  // A JSON content type only with a body: an empty body declared as JSON is refused (400).
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${serverUrl}${path}`, {
    method,
    headers,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${text}`);
  return text ? JSON.parse(text) : undefined;
}

/** The web UI's demo login: an Admin, created through the admin API like any user. */
export const demoUser = { username: 'demo', password: 'demo-password-for-this-demo-only' };

/** Creates the demo user unless an earlier start did. */
export async function seedDemoUser(serverUrl: string, adminToken: string): Promise<void> {
  const { users } = (await adminRequest(serverUrl, adminToken, 'GET', '/api/admin/user-admin')) as {
    users: { username?: string | null }[];
  };
  if (users.some((user) => user.username === demoUser.username)) return;
  await adminRequest(serverUrl, adminToken, 'POST', '/api/admin/user-admin', {
    ...demoUser,
    name: 'Demo Admin',
    rootRole: 'Admin',
  });
}

/** Creates the demo segment and imports the demo flags, unless an earlier start did. */
export async function seedDemo(serverUrl: string, adminToken: string): Promise<boolean> {
  const { segments } = (await adminRequest(
    serverUrl,
    adminToken,
    'GET',
    '/api/admin/segments',
  )) as {
    segments: { name: string }[];
  };
  if (segments.some((segment) => segment.name === demoSegment.name)) return false;
  await adminRequest(serverUrl, adminToken, 'POST', '/api/admin/segments', demoSegment);
  await adminRequest(
    serverUrl,
    adminToken,
    'POST',
    '/api/admin/features-batch/import',
    demoImport(),
  );
  return true;
}
