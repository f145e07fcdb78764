import type { ProxyOptions } from '@flags/proxy';
import type { ClientFeatures } from '@flags/schemas';
import type { FakeUpstream } from './fake-upstream.js';
import { type Listening, type Running, startProxy } from './proxy.js';

const SECRET = 'a'.repeat(32);
/** The startup token: client access to every project of `production`. */
export const ALL_CLIENT = `*:production.all-client-${SECRET}`;
/** A client token of the `billing` project only, validated upstream. */
export const BILLING_CLIENT = `billing:production.billing-client-${SECRET}`;
export const FRONTEND = `*:production.frontend-${SECRET}`;

const BLUE = {
  name: 'blue',
  weight: 1000,
  weightType: 'variable',
  stickiness: 'default',
  payload: { type: 'string', value: 'blue' },
} as const;

/** The first payload: two projects, two segments. */
export const firstPayload: ClientFeatures = {
  version: 2,
  features: [
    { name: 'checkout', enabled: true, strategies: [{ name: 'default' }], variants: [BLUE] },
    { name: 'invoice', project: 'billing', enabled: true, strategies: [{ name: 'default' }] },
    { name: 'retired', enabled: true, strategies: [{ name: 'default' }] },
    {
      name: 'beta-users',
      project: 'billing',
      enabled: true,
      strategies: [{ name: 'default', segments: [1] }],
    },
  ],
  segments: [
    {
      id: 1,
      name: 'beta',
      constraints: [{ contextName: 'userId', operator: 'IN', values: ['7'] }],
    },
    { id: 2, name: 'unused', constraints: [] },
  ],
};

/**
 * The second: `checkout` off, `retired` gone, `receipts` new in billing, `invoice` moved to the
 * default project, segment 1 changed, segment 2 gone; `beta-users` as it was.
 */
export const secondPayload: ClientFeatures = {
  version: 2,
  features: [
    { name: 'checkout', enabled: false, strategies: [{ name: 'default' }], variants: [BLUE] },
    { name: 'invoice', enabled: true, strategies: [{ name: 'default' }] },
    {
      name: 'beta-users',
      project: 'billing',
      enabled: true,
      strategies: [{ name: 'default', segments: [1] }],
    },
    { name: 'receipts', project: 'billing', enabled: true, strategies: [{ name: 'default' }] },
  ],
  segments: [
    {
      id: 1,
      name: 'beta',
      constraints: [{ contextName: 'userId', operator: 'IN', values: ['7', '8'] }],
    },
  ],
};

/** A proxy syncing `firstPayload` every 50 ms, knowing the billing and frontend tokens upstream. */
export function startChangingProxy(options?: ProxyOptions): Promise<Running>;
export function startChangingProxy(options: ProxyOptions, listen: true): Promise<Listening>;
export function startChangingProxy(
  options: ProxyOptions = {},
  listen = false,
): Promise<Running | Listening> {
  const upstream = (fake: FakeUpstream) => {
    fake.knownTokens.set(BILLING_CLIENT, {
      type: 'client',
      environment: 'production',
      projects: ['billing'],
    });
    fake.knownTokens.set(FRONTEND, {
      type: 'frontend',
      environment: 'production',
      projects: ['*'],
    });
  };
  const all = { flagsApiToken: [ALL_CLIENT], ...options };
  return listen
    ? startProxy(structuredClone(firstPayload), all, { upstream, listen: true })
    : startProxy(structuredClone(firstPayload), all, { upstream });
}

/** Request headers with `token` as the key. */
export function auth(
  token: string,
  headers: Record<string, string> = {},
): { headers: Record<string, string> } {
  return { headers: { authorization: token, ...headers } };
}
