import { useCallback, useContext, useEffect, useState } from 'preact/hooks';
import { api, enc, envPath, get, query } from '../api.js';
import {
  ConfirmDialog,
  formatTime,
  html,
  LiveContext,
  messageOf,
  Notice,
  SessionContext,
  Switch,
  useLiveReload,
} from '../kit.js';
import type { FlagOverview } from '../types.js';

/** unleash-server's flag types. */
export const FLAG_TYPES = ['release', 'experiment', 'operational', 'kill-switch', 'permission'];

const PAGE_SIZE = 50;

interface Filters {
  query: string;
  type: string;
  state: string;
  tag: string;
  sortBy: string;
  offset: number;
}

interface PendingToggle {
  flag: FlagOverview;
  environment: string;
  on: boolean;
}

/** Turns a flag on or off in an environment; production-type environments ask first. */
export function useToggle(after: () => void) {
  const [pending, setPending] = useState<PendingToggle>();
  const [error, setError] = useState<string>();
  const apply = async (toggle: PendingToggle) => {
    setPending(undefined);
    setError(undefined);
    try {
      await api(
        'POST',
        `${envPath(toggle.flag.project, toggle.flag.name, toggle.environment)}/${toggle.on ? 'on' : 'off'}`,
      );
      after();
    } catch (failure) {
      setError(messageOf(failure));
    }
  };
  const request = (toggle: PendingToggle, environmentType: string) => {
    if (environmentType === 'production') setPending(toggle);
    else void apply(toggle);
  };
  const dialog = pending
    ? html`<${ConfirmDialog}
        title=${`Turn ${pending.flag.name} ${pending.on ? 'on' : 'off'} in ${pending.environment}?`}
        message=${`${pending.environment} is a production environment: the change reaches its users at once.`}
        confirmLabel=${pending.on ? 'Turn on' : 'Turn off'}
        onConfirm=${() => apply(pending)}
        onCancel=${() => setPending(undefined)} />`
    : null;
  return { request, dialog, error };
}

function CreateFlagForm(props: { onCreated: (project: string, name: string) => void }) {
  const [projects, setProjects] = useState<{ id: string; name: string }[]>([]);
  const [error, setError] = useState<string>();
  useEffect(() => {
    get<{ projects: { id: string; name: string }[] }>('/api/admin/projects').then(
      (answer) => setProjects(answer.projects),
      (failure: unknown) => setError(messageOf(failure)),
    );
  }, []);
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const project = String(form.get('project') ?? 'default');
    const name = String(form.get('name') ?? '').trim();
    try {
      await api('POST', `/api/admin/projects/${enc(project)}/features`, {
        name,
        type: String(form.get('type')),
        description: String(form.get('description') ?? '') || null,
      });
      props.onCreated(project, name);
    } catch (failure) {
      setError(messageOf(failure));
    }
  };
  return html`<form class="card create" onSubmit=${submit} aria-labelledby="create-title">
    <h2 id="create-title">New flag</h2>
    <div class="row">
      <label>Name <input name="name" required pattern="[A-Za-z0-9_.~\\-]+" maxlength="100" /></label>
      <label>Project
        <select name="project">
          ${projects.map((project) => html`<option value=${project.id}>${project.name}</option>`)}
        </select>
      </label>
      <label>Type
        <select name="type">${FLAG_TYPES.map((type) => html`<option>${type}</option>`)}</select>
      </label>
      <label class="grow">Description <input name="description" maxlength="10000" /></label>
      <button type="submit">Create flag</button>
    </div>
    <${Notice} error=${error} />
  </form>`;
}

/** The flag list: server-side search, filters and paging; a switch per environment. */
export function FlagListPage(props: { archived: boolean; navigate?: (to: string) => void }) {
  const session = useContext(SessionContext);
  const live = useContext(LiveContext);
  const [filters, setFilters] = useState<Filters>({
    query: '',
    type: '',
    state: '',
    tag: '',
    sortBy: 'createdAt',
    offset: 0,
  });
  const [result, setResult] = useState<{ features: FlagOverview[]; total: number }>();
  const [error, setError] = useState<string>();
  const [creating, setCreating] = useState(false);

  const load = useCallback(() => {
    get<{ features: FlagOverview[]; total: number }>(
      `/api/admin/search/features${query({
        query: filters.query,
        type: filters.type ? `IS:${filters.type}` : undefined,
        state: filters.state ? `IS:${filters.state}` : undefined,
        tag: filters.tag ? `INCLUDE:${filters.tag}` : undefined,
        archived: `IS:${props.archived}`,
        sortBy: filters.sortBy,
        sortOrder: filters.sortBy === 'name' ? 'asc' : 'desc',
        offset: filters.offset,
        limit: PAGE_SIZE,
      })}`,
    ).then(
      (answer) => {
        setResult(answer);
        setError(undefined);
      },
      (failure: unknown) => setError(messageOf(failure)),
    );
  }, [filters, props.archived]);
  useEffect(load, [load]);
  useLiveReload(live, load);
  const toggle = useToggle(load);

  const set = (change: Partial<Filters>) => setFilters({ ...filters, offset: 0, ...change });
  const onInput = (key: keyof Filters) => (event: Event) =>
    set({ [key]: (event.currentTarget as HTMLInputElement).value });

  const archiveAction = async (flag: FlagOverview, action: 'revive' | 'delete') => {
    if (action === 'delete' && !window.confirm(`Delete ${flag.name} for good?`)) return;
    try {
      if (action === 'revive') await api('POST', `/api/admin/archive/revive/${enc(flag.name)}`);
      else await api('DELETE', `/api/admin/archive/${enc(flag.name)}`);
      load();
    } catch (failure) {
      setError(messageOf(failure));
    }
  };

  const environments = result?.features[0]?.environments ?? [];
  const total = result?.total ?? 0;
  const last = Math.min(filters.offset + PAGE_SIZE, total);
  return html`<section aria-labelledby="list-title">
    <div class="title-row">
      <h1 id="list-title">${props.archived ? 'Archived flags' : 'Flags'}</h1>
      ${
        session.canEdit && !props.archived
          ? html`<button type="button" onClick=${() => setCreating(!creating)}
              aria-expanded=${creating}>${creating ? 'Close' : 'New flag'}</button>`
          : null
      }
    </div>
    ${
      creating
        ? html`<${CreateFlagForm} onCreated=${(project: string, name: string) =>
            props.navigate?.(`/flags/${enc(project)}/${enc(name)}`)} />`
        : null
    }
    <form class="filters" role="search" onSubmit=${(event: Event) => event.preventDefault()}>
      <label class="grow">Search <input type="search" value=${filters.query}
        onInput=${onInput('query')} placeholder="name or description" /></label>
      <label>Type
        <select value=${filters.type} onChange=${onInput('type')}>
          <option value="">any</option>
          ${FLAG_TYPES.map((type) => html`<option>${type}</option>`)}
        </select>
      </label>
      <label>State
        <select value=${filters.state} onChange=${onInput('state')}>
          <option value="">any</option><option>active</option><option>stale</option>
        </select>
      </label>
      <label>Tag <input value=${filters.tag} onChange=${onInput('tag')} placeholder="type:value" /></label>
      <label>Sort
        <select value=${filters.sortBy} onChange=${onInput('sortBy')}>
          <option value="createdAt">newest</option><option value="name">name</option>
          <option value="type">type</option>
        </select>
      </label>
    </form>
    <${Notice} error=${error ?? toggle.error} />
    ${toggle.dialog}
    <table class="flags">
      <caption class="sr-only">Flags ${filters.offset + 1} to ${last} of ${total}</caption>
      <thead><tr>
        <th scope="col">Name</th><th scope="col">Type</th><th scope="col">Tags</th>
        <th scope="col">Created</th>
        ${
          props.archived
            ? html`<th scope="col">Actions</th>`
            : environments.map((environment) => html`<th scope="col">${environment.name}</th>`)
        }
      </tr></thead>
      <tbody>
        ${result?.features.map(
          (flag) => html`<tr key=${flag.name}>
            <th scope="row">
              ${
                props.archived
                  ? flag.name
                  : html`<a href=${`/flags/${enc(flag.project)}/${enc(flag.name)}`}>${flag.name}</a>`
              }
              ${flag.stale ? html` <span class="badge">stale</span>` : null}
              ${flag.description ? html`<div class="muted">${flag.description}</div>` : null}
            </th>
            <td>${flag.type}</td>
            <td>${flag.tags.map((tag) => html`<span class="tag">${tag.type}:${tag.value}</span> `)}</td>
            <td class="muted">${formatTime(flag.createdAt)}</td>
            ${
              props.archived
                ? html`<td>${
                    session.canEdit
                      ? html`<button type="button" class="secondary"
                          onClick=${() => archiveAction(flag, 'revive')}>Revive</button>
                        <button type="button" class="danger"
                          onClick=${() => archiveAction(flag, 'delete')}>Delete</button>`
                      : null
                  }</td>`
                : flag.environments.map(
                    (environment) => html`<td><${Switch}
                      checked=${environment.enabled}
                      disabled=${!session.canEdit}
                      label=${`${flag.name} in ${environment.name}`}
                      onChange=${(on: boolean) =>
                        toggle.request(
                          { flag, environment: environment.name, on },
                          environment.type,
                        )} /></td>`,
                  )
            }
          </tr>`,
        )}
      </tbody>
    </table>
    ${result && result.features.length === 0 ? html`<p class="muted">No flags match.</p>` : null}
    <nav class="pager" aria-label="Pages">
      <button type="button" class="secondary" disabled=${filters.offset === 0}
        onClick=${() => setFilters({ ...filters, offset: Math.max(0, filters.offset - PAGE_SIZE) })}>Previous</button>
      <span role="status">${total === 0 ? 0 : filters.offset + 1}–${last} of ${total}</span>
      <button type="button" class="secondary" disabled=${last >= total}
        onClick=${() => setFilters({ ...filters, offset: filters.offset + PAGE_SIZE })}>Next</button>
    </nav>
  </section>`;
}
