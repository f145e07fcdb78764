import { api, get } from '../api.js';
import { html } from '../kit.js';
import { optional, ResourcePage, type ResourceSpec, Usage } from '../resource-page.js';
import type { Constraint, ContextField, Segment } from '../types.js';
import { ConstraintsEditor, describeConstraint } from './constraints.js';

interface Extra {
  readonly fields: ContextField[];
  readonly projects: { id: string; name: string }[];
}

interface SegmentUses {
  strategies?: { featureName: string; environment: string; projectId?: string }[];
}

/** The flags whose strategies use a segment (`GET /api/admin/segments/:id/strategies`). */
const usesOf = async (id: number) => {
  const answer = await get<SegmentUses>(`/api/admin/segments/${id}/strategies`);
  return (answer.strategies ?? []).map(
    (use) => `${use.featureName} (${use.projectId ? `${use.projectId}, ` : ''}${use.environment})`,
  );
};

const bodyOf = (values: Record<string, unknown>) => ({
  name: String(values.name ?? '').trim(),
  description: optional(values.description) ?? null,
  project: optional(values.project) ?? null,
  constraints: (values.constraints ?? []) as Constraint[],
});

const spec: ResourceSpec<Segment, Extra> = {
  id: 'segments',
  title: 'Segments',
  noun: 'segment',
  intro: 'Constraints kept under a name, for strategies of any flag to reuse.',
  write: 'edit',
  list: async () => (await get<{ segments: Segment[] }>('/api/admin/segments')).segments,
  extra: async () => {
    const [fields, projects] = await Promise.all([
      get<ContextField[]>('/api/admin/context'),
      get<{ projects: { id: string; name: string }[] }>('/api/admin/projects'),
    ]);
    return { fields, projects: projects.projects };
  },
  key: (segment) => String(segment.id),
  label: (segment) => segment.name,
  columns: [
    { label: 'Name', cell: (segment) => segment.name },
    {
      label: 'Description',
      cell: (segment) => html`<span class="clip">${segment.description}</span>`,
    },
    {
      label: 'Constraints',
      cell: (segment) =>
        html`<ul class="constraint-list">${segment.constraints.map(
          (constraint) => html`<li>${describeConstraint(constraint)}</li>`,
        )}</ul>`,
    },
    { label: 'Project', cell: (segment) => segment.project ?? 'all' },
  ],
  fields: [
    { name: 'name', label: 'Name', required: true, maxLength: 100 },
    { name: 'description', label: 'Description', maxLength: 1000 },
    {
      name: 'project',
      label: 'Project',
      type: 'select',
      options: (extra) => [
        { value: '', label: 'All projects' },
        ...extra.projects.map((project) => ({ value: project.id, label: project.name })),
      ],
    },
    {
      name: 'constraints',
      label: 'Constraints',
      initial: () => [],
      render: (field, extra) => html`<${ConstraintsEditor} idPrefix=${field.id}
        constraints=${(field.value ?? []) as Constraint[]} fields=${extra.fields}
        onChange=${field.set} />`,
    },
  ],
  create: (values) => api('POST', '/api/admin/segments', bodyOf(values)),
  update: (segment, values) => api('PUT', `/api/admin/segments/${segment.id}`, bodyOf(values)),
  remove: (segment) => api('DELETE', `/api/admin/segments/${segment.id}`),
  details: {
    label: 'Used by',
    render: (segment) => html`<${Usage} of=${String(segment.id)} what="flag"
      load=${() => usesOf(segment.id)} />`,
  },
};

export function SegmentsPage() {
  return html`<${ResourcePage} spec=${spec} />`;
}
