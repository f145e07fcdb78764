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
