import { api, enc, get } from '../api.js';
import { html } from '../kit.js';
import { listOf, optional, ResourcePage, type ResourceSpec, Usage } from '../resource-page.js';
import type { ContextField } from '../types.js';

/**
 * The body of a create or an edit (a PUT sets stickiness and legal values as sent); a legal value
 * kept keeps its description.
 */
const bodyOf = (values: Record<string, unknown>, before?: ContextField) => ({
  description: optional(values.description) ?? '',
  stickiness: values.stickiness === true,
  legalValues: listOf(values.legalValues).map((value) => {
    const description = before?.legalValues?.find((legal) => legal.value === value)?.description;
    return description === undefined ? { value } : { value, description };
  }),
});

/** Where a field is used (`GET /api/admin/context/:name/strategies`). */
const usesOf = async (name: string) => {
  const answer = await get<{ strategies?: { featureName: string; environment: string }[] }>(
    `/api/admin/context/${enc(name)}/strategies`,
  );
  return (answer.strategies ?? []).map((use) => `${use.featureName} (${use.environment})`);
};

const spec: ResourceSpec<ContextField> = {
  id: 'context-fields',
  title: 'Context fields',
  noun: 'context field',
  intro: 'What constraints can test: the SDK sends their values with each evaluation.',
  write: 'edit',
  list: () => get<ContextField[]>('/api/admin/context'),
  key: (field) => field.name,
  label: (field) => field.name,
  columns: [
    { label: 'Name', cell: (field) => field.name },
    { label: 'Description', cell: (field) => html`<span class="clip">${field.description}</span>` },
    {
      label: 'Legal values',
      cell: (field) => (field.legalValues ?? []).map((legal) => legal.value).join(', '),
    },
    { label: 'Stickiness', cell: (field) => (field.stickiness ? 'yes' : 'no') },
  ],
  fields: [
    { name: 'name', label: 'Name', required: true, maxLength: 100, fixed: true },
    { name: 'description', label: 'Description', maxLength: 1000 },
    {
      name: 'legalValues',
      label: 'Legal values',
      type: 'list',
      hint: 'Comma-separated; none: any value.',
      read: (field) => (field.legalValues ?? []).map((legal) => legal.value),
    },
    { name: 'stickiness', label: 'Usable as stickiness', type: 'checkbox' },
  ],
  create: (values) =>
    api('POST', '/api/admin/context', {
      name: String(values.name ?? '').trim(),
      ...bodyOf(values),
    }),
  update: (field, values) =>
    api('PUT', `/api/admin/context/${enc(field.name)}`, bodyOf(values, field)),
  remove: (field) => api('DELETE', `/api/admin/context/${enc(field.name)}`),
  details: {
    label: 'Used by',
    render: (field) => html`<${Usage} of=${field.name} what="strategy"
      load=${() => usesOf(field.name)} />`,
  },
};

export function ContextFieldsPage() {
  return html`<${ResourcePage} spec=${spec} />`;
}
