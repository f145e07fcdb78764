/** Projects: create, edit, delete while empty; their environments on and off. */
import { useContext, useEffect, useState } from 'preact/hooks';
import { api, enc, get } from '../api.js';
import { html, messageOf, SessionContext, Switch } from '../kit.js';
import { may, optional, ResourcePage, type ResourceSpec, type Values } from '../resource-page.js';

interface Project {
  id: string;
  name: string;
  description: string | null;
}

/** Each environment with a switch: on when the project has it (Editors and Admins switch). */
function ProjectEnvironments(props: { project: string }) {
  const session = useContext(SessionContext);
  const [all, setAll] = useState<{ name: string }[]>();
  const [enabled, setEnabled] = useState<string[]>([]);
  const [error, setError] = useState<string>();
  const load = () =>
    Promise.all([
      get<{ environments: { name: string }[] }>('/api/admin/environments'),
      get<{ environments: string[] }>(`/api/admin/projects/${enc(props.project)}`),
    ]).then(
      ([environments, project]) => {
        setAll(environments.environments);
        setEnabled(project.environments);
      },
      (failure: unknown) => setError(messageOf(failure)),
    );
  useEffect(() => {
    void load();
  }, [props.project]);
  const change = async (environment: string, on: boolean) => {
    setError(undefined);
    try {
      await (on
        ? api('POST', `/api/admin/projects/${enc(props.project)}/environments`, { environment })
        : api(
            'DELETE',
            `/api/admin/projects/${enc(props.project)}/environments/${enc(environment)}`,
          ));
      await load();
    } catch (failure) {
      setError(messageOf(failure));
    }
  };
  if (all === undefined) return html`<p class="muted">${error ?? 'Loading…'}</p>`;
  return html`<ul class="uses project-environments">
      ${all.map(
        (environment) => html`<li key=${environment.name}>
          <${Switch} checked=${enabled.includes(environment.name)}
            label=${`${environment.name} in ${props.project}`}
            disabled=${!may(session, 'edit')}
            onChange=${(on: boolean) => change(environment.name, on)} />
          ${' '}${environment.name}
        </li>`,
      )}
    </ul>
    ${error ? html`<p class="field-error" role="alert">${error}</p>` : null}`;
}

const bodyOf = (values: Values) => ({
  name: optional(values.name) ?? String(values.id ?? '').trim(),
  description: optional(values.description) ?? null,
});

const spec: ResourceSpec<Project> = {
  id: 'projects',
  title: 'Projects',
  noun: 'project',
  intro: 'Flags live in a project; API tokens can be limited to some projects.',
  write: 'admin',
  list: async () => (await get<{ projects: Project[] }>('/api/admin/projects')).projects,
  key: (project) => project.id,
  label: (project) => project.name || project.id,
  columns: [
    { label: 'Id', cell: (project) => project.id },
    { label: 'Name', cell: (project) => project.name },
    {
      label: 'Description',
      cell: (project) => html`<span class="clip">${project.description}</span>`,
    },
  ],
  fields: [
    {
      name: 'id',
      label: 'Id',
      required: true,
      maxLength: 100,
      fixed: true,
      hint: 'Letters, digits and - _ . ~; used in URLs and tokens.',
    },
    { name: 'name', label: 'Name', maxLength: 100 },
    { name: 'description', label: 'Description', type: 'textarea', maxLength: 1000 },
  ],
  create: (values) =>
    api('POST', '/api/admin/projects', { id: String(values.id ?? '').trim(), ...bodyOf(values) }),
  update: (project, values) =>
    api('PUT', `/api/admin/projects/${enc(project.id)}`, bodyOf({ ...values, id: project.id })),
  remove: (project) => api('DELETE', `/api/admin/projects/${enc(project.id)}`),
  removable: (project) => project.id !== 'default',
  details: {
    label: 'Environments',
    render: (project) => html`<${ProjectEnvironments} project=${project.id} />`,
  },
};

export function ProjectsPage() {
  return html`<${ResourcePage} spec=${spec} />`;
}
