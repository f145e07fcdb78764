/**
 * API tokens: client tokens for server-side SDKs and Edge, frontend tokens for browser and mobile
 * SDKs, admin tokens for scripts. The secret is shown once, when created, with the SDK code that
 * uses it.
 */
import { useState } from 'preact/hooks';
import { api, get } from '../api.js';
import { formatTime, html } from '../kit.js';
import { type FieldProps, ResourcePage, type ResourceSpec, type Values } from '../resource-page.js';

interface ApiToken {
  id: number;
  secret: string;
  tokenName: string;
  type: 'client' | 'frontend' | 'admin';
  environment: string;
  projects: string[];
  createdAt: string;
  expiresAt: string | null;
}

interface Extra {
  readonly projects: { id: string; name: string }[];
  readonly environments: { name: string; enabled: boolean }[];
}

const TYPES = [
  { value: 'client', label: 'Client (server-side SDK, Edge)' },
  { value: 'frontend', label: 'Frontend (browser or mobile SDK)' },
  { value: 'admin', label: 'Admin (scripts, the Admin API)' },
] as const;

/** The code that connects an SDK with `secret`, by the token's type. */
export function snippetOf(type: string, secret: string, origin: string): string {
  if (type === 'frontend') {
    return `import { UnleashClient } from 'unleash-proxy-client';

const unleash = new UnleashClient({
  url: '${origin}/api/frontend',
  clientKey: '${secret}',
  appName: 'my-web-app',
});
unleash.start();`;
  }
  if (type === 'admin') {
    return `curl -H 'Authorization: ${secret}' ${origin}/api/admin/projects`;
  }
  return `import { initialize } from 'unleash-client';

const unleash = initialize({
  url: '${origin}/api/',
  appName: 'my-service',
  customHeaders: { Authorization: '${secret}' },
});`;
}

/** A secret shown once: the text, a copy button and what the copy did. */
export function Secret(props: { label: string; value: string }) {
  const [copied, setCopied] = useState<string>();
  const copy = () =>
    navigator.clipboard.writeText(props.value).then(
      () => setCopied('Copied.'),
      () => setCopied('Copying is not allowed here: select the text and copy it.'),
    );
  return html`<div class="secret">
    <span>${props.label}</span>
    <code data-secret>${props.value}</code>
    <button type="button" class="secondary" onClick=${copy}>Copy</button>
    <span role="status">${copied}</span>
  </div>`;
}

function Created(props: { token: ApiToken }) {
  const { token } = props;
  return html`<h2>Token ${token.tokenName} is created</h2>
    <p>Copy the secret now: it is not shown again.</p>
    <${Secret} label="Secret" value=${token.secret} />
    <h3>${token.type === 'admin' ? 'Use it' : 'Connect an SDK with it'}</h3>
    <pre class="snippet">${snippetOf(token.type, token.secret, location.origin)}</pre>`;
}

const scoped = (values: Values) => values.type !== 'admin';

/** The projects a token sees: all of them (now and later), or those checked. */
function ProjectsPicker(props: { field: FieldProps; projects: Extra['projects'] }) {
  const chosen = (props.field.value ?? ['*']) as string[];
  const all = chosen.includes('*');
  const toggle = (project: string, on: boolean) => {
    const rest = chosen.filter((entry) => entry !== '*' && entry !== project);
    const next = on ? [...rest, project] : rest;
    props.field.set(next.length === 0 ? ['*'] : next);
  };
  return html`<fieldset id=${props.field.id} class="legal">
    <legend>Projects</legend>
    <label class="inline"><input type="checkbox" checked=${all}
      onChange=${(event: Event) =>
        props.field.set((event.currentTarget as HTMLInputElement).checked ? ['*'] : chosen)} />
      All projects</label>
    ${props.projects.map(
      (project) => html`<label class="inline" key=${project.id}><input type="checkbox"
        checked=${!all && chosen.includes(project.id)}
        onChange=${(event: Event) => toggle(project.id, (event.currentTarget as HTMLInputElement).checked)} />
        ${project.name}</label>`,
    )}
  </fieldset>`;
}

const spec: ResourceSpec<ApiToken, Extra> = {
  id: 'api-tokens',
  title: 'API tokens',
  noun: 'API token',
  intro:
    'What SDKs, Edge and scripts connect with. A token sees the projects and environment it is made for.',
  write: 'admin',
  list: async () => (await get<{ tokens: ApiToken[] }>('/api/admin/api-tokens')).tokens,
  extra: async () => {
    const [projects, environments] = await Promise.all([
      get<{ projects: Extra['projects'] }>('/api/admin/projects'),
      get<{ environments: Extra['environments'] }>('/api/admin/environments'),
    ]);
    return { projects: projects.projects, environments: environments.environments };
  },
  key: (token) => String(token.id),
  label: (token) => token.tokenName,
  columns: [
    { label: 'Name', cell: (token) => token.tokenName },
    { label: 'Type', cell: (token) => token.type },
    {
      label: 'Projects',
      cell: (token) => (token.projects.includes('*') ? 'all' : token.projects.join(', ')),
    },
    {
      label: 'Environment',
      cell: (token) => (token.environment === '*' ? 'all' : token.environment),
    },
    { label: 'Secret', cell: (token) => html`<code>${token.secret}</code>` },
    { label: 'Created', cell: (token) => formatTime(token.createdAt) },
  ],
  fields: [
    {
      name: 'tokenName',
      label: 'Name',
      required: true,
      maxLength: 255,
      hint: 'Who uses it: the app or the script.',
    },
    {
      name: 'type',
      label: 'Type',
      type: 'select',
      initial: () => 'client',
      options: () => TYPES,
    },
    {
      name: 'projects',
      label: 'Projects',
      when: scoped,
      initial: () => ['*'],
      render: (field, extra) =>
        html`<${ProjectsPicker} field=${field} projects=${extra.projects} />`,
    },
    {
      name: 'environment',
      label: 'Environment',
      type: 'select',
      when: scoped,
      initial: (extra) =>
        extra.environments.find((environment) => environment.name === 'development')?.name ??
        extra.environments[0]?.name ??
        '',
      options: (extra) =>
        extra.environments.map((environment) => ({
          value: environment.name,
          label: environment.enabled ? environment.name : `${environment.name} (disabled)`,
        })),
    },
  ],
  create: (values) =>
    api(
      'POST',
      '/api/admin/api-tokens',
      scoped(values)
        ? {
            tokenName: String(values.tokenName ?? '').trim(),
            type: values.type,
            projects: (values.projects as string[] | undefined) ?? ['*'],
            environment: values.environment,
          }
        : { tokenName: String(values.tokenName ?? '').trim(), type: 'admin' },
    ),
  created: (answer) => html`<${Created} token=${answer as ApiToken} />`,
  remove: (token) => api('DELETE', `/api/admin/api-tokens/${token.id}`),
  removeLabel: 'Revoke',
  empty: 'No API tokens yet: create one to connect an SDK.',
};

export function ApiTokensPage() {
  return html`<${ResourcePage} spec=${spec} />`;
}
