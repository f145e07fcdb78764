/** Environments: create, type and order, enable and disable, delete while unused. */
import { api, enc, get } from '../api.js';
import { html } from '../kit.js';
import { ResourcePage, type ResourceSpec, type Values } from '../resource-page.js';

interface Environment {
  name: string;
  type: string;
  sortOrder: number;
  enabled: boolean;
}

/** Unleash's environment types. */
const TYPES = ['development', 'test', 'preproduction', 'production'].map((type) => ({
  value: type,
  label: type,
}));

const bodyOf = (values: Values) => {
  const order = String(values.sortOrder ?? '').trim();
  return { type: String(values.type), ...(order === '' ? {} : { sortOrder: Number(order) }) };
};

const spec: ResourceSpec<Environment> = {
  id: 'environments',
  title: 'Environments',
  noun: 'environment',
  intro:
    'Each flag is on or off, with its own strategies, per environment; a client or frontend token serves one.',
  write: 'admin',
  list: async () =>
    (await get<{ environments: Environment[] }>('/api/admin/environments')).environments,
  key: (environment) => environment.name,
  label: (environment) => environment.name,
  columns: [
    { label: 'Name', cell: (environment) => environment.name },
    { label: 'Type', cell: (environment) => environment.type },
    { label: 'Order', cell: (environment) => environment.sortOrder },
    { label: 'State', cell: (environment) => (environment.enabled ? 'enabled' : 'disabled') },
  ],
  fields: [
    {
      name: 'name',
      label: 'Name',
      required: true,
      maxLength: 100,
      fixed: true,
      hint: 'Letters, digits and - _ . ~.',
    },
    {
      name: 'type',
      label: 'Type',
      type: 'select',
      initial: () => 'development',
      options: () => TYPES,
    },
    {
      name: 'sortOrder',
      label: 'Order',
      type: 'number',
      hint: 'Lower first.',
      read: (environment) => String(environment.sortOrder),
    },
  ],
  create: (values) =>
    api('POST', '/api/admin/environments', {
      name: String(values.name ?? '').trim(),
      ...bodyOf(values),
    }),
  update: (environment, values) =>
    api('PUT', `/api/admin/environments/update/${enc(environment.name)}`, bodyOf(values)),
  remove: (environment) => api('DELETE', `/api/admin/environments/${enc(environment.name)}`),
  actions: (environment, row) =>
    row.writable
      ? html`<button type="button" class="secondary"
          aria-label=${`${environment.enabled ? 'Disable' : 'Enable'} ${environment.name}`}
          onClick=${() =>
            row.change(
              () =>
                api(
                  'POST',
                  `/api/admin/environments/${enc(environment.name)}/${environment.enabled ? 'off' : 'on'}`,
                ),
              `${environment.name} is ${environment.enabled ? 'disabled' : 'enabled'}.`,
            )}>${environment.enabled ? 'Disable' : 'Enable'}</button>`
      : null,
};

export function EnvironmentsPage() {
  return html`<${ResourcePage} spec=${spec} />`;
}
