/** Tag types: the kinds of tag a flag can carry (`team:payments` needs the type `team`). */
import { api, enc, get } from '../api.js';
import { html } from '../kit.js';
import { optional, ResourcePage, type ResourceSpec } from '../resource-page.js';

interface TagType {
  name: string;
  description: string | null;
}

const spec: ResourceSpec<TagType> = {
  id: 'tag-types',
  title: 'Tag types',
  noun: 'tag type',
  intro: 'A tag is a type and a value (team:payments); the type must exist first.',
  write: 'edit',
  list: async () => (await get<{ tagTypes: TagType[] }>('/api/admin/tag-types')).tagTypes,
  key: (type) => type.name,
  label: (type) => type.name,
  columns: [
    { label: 'Name', cell: (type) => type.name },
    { label: 'Description', cell: (type) => html`<span class="clip">${type.description}</span>` },
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
    { name: 'description', label: 'Description', maxLength: 1000 },
  ],
  create: (values) =>
    api('POST', '/api/admin/tag-types', {
      name: String(values.name ?? '').trim(),
      ...(optional(values.description) === undefined
        ? {}
        : { description: optional(values.description) }),
    }),
  update: (type, values) =>
    api('PUT', `/api/admin/tag-types/${enc(type.name)}`, {
      description: optional(values.description) ?? '',
    }),
  remove: (type) => api('DELETE', `/api/admin/tag-types/${enc(type.name)}`),
};

export function TagTypesPage() {
  return html`<${ResourcePage} spec=${spec} />`;
}
