import { useCallback, useContext, useEffect, useState } from 'preact/hooks';
import { api, enc, envPath, get, query } from '../api.js';
import {
  ConfirmDialog,
  formatTime,
  html,
  LiveContext,
  messageOf,
  type Navigate,
  Notice,
  SessionContext,
  Switch,
  useLiveReload,
} from '../kit.js';
import type { FlagOverview, Tag } from '../types.js';

/** unleash-server's flag types. */
export const FLAG_TYPES = ['release', 'experiment', 'operational', 'kill-switch', 'permission'];

const PAGE_SIZE = 50;

/** The list's filters, sort and page: all in the address, so reload, back and links keep them. */
interface Filters {
  query: string;
  type: string;
  state: string;
  tag: string;
  project: string;
  sortBy: string;
  /** From 1. */
  page: number;
}

const SORTS = ['createdAt', 'name', 'type'];

/** The filters a query string (`?q=…&project=…&page=2`) holds; anything else is left out. */
export function filtersOf(search: string): Filters {
  const params = new URLSearchParams(search);
  const page = Number.parseInt(params.get('page') ?? '', 10);
  const sortBy = params.get('sort') ?? '';
  return {
    query: params.get('q') ?? '',
    type: params.get('type') ?? '',
    state: params.get('state') ?? '',
    tag: params.get('tag') ?? '',
    project: params.get('project') ?? '',
    sortBy: SORTS.includes(sortBy) ? sortBy : 'createdAt',
    page: Number.isSafeInteger(page) && page > 1 ? page : 1,
  };
}

/** The query string of `filters`, defaults left out. */
function searchOf(filters: Filters): string {
  return query({
    q: filters.query,
    project: filters.project,
    type: filters.type,
    state: filters.state,
    tag: filters.tag,
    sort: filters.sortBy === 'createdAt' ? undefined : filters.sortBy,
    page: filters.page > 1 ? filters.page : undefined,
  });
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

/** The tags a flag list can be filtered by, grouped by tag type. */
function useTagOptions(): Map<string, string[]> {
  const [tags, setTags] = useState<Map<string, string[]>>(new Map());
  useEffect(() => {
    Promise.all([
      get<{ tagTypes: { name: string }[] }>('/api/admin/tag-types'),
      get<{ tags: Tag[] }>('/api/admin/tags'),
    ]).then(
      ([types, answer]) => {
        const byType = new Map(types.tagTypes.map((type) => [type.name, [] as string[]]));
        for (const tag of answer.tags) {
          const values = byType.get(tag.type) ?? [];
          values.push(tag.value);
          byType.set(tag.type, values);
        }
        for (const values of byType.values()) values.sort();
        setTags(byType);
      },
      // Without them the tag filter is only shorter: the list itself still works.
      () => setTags(new Map()),
    );
  }, []);
  return tags;
}

function useProjects(): { id: string; name: string }[] {
  const [projects, setProjects] = useState<{ id: string; name: string }[]>([]);
  useEffect(() => {
    get<{ projects: { id: string; name: string }[] }>('/api/admin/projects').then(
      (answer) => setProjects(answer.projects),
      () => setProjects([]),
    );
  }, []);
  return projects;
}

/** The flag list: server-side search, filters and paging; a switch per environment. */
export function FlagListPage(props: {
  archived: boolean;
  /** The address's query string, which holds the filters. */
  search: string;
  navigate: Navigate;
}) {
  const session = useContext(SessionContext);
  const live = useContext(LiveContext);
  const filters = filtersOf(props.search);
  const offset = (filters.page - 1) * PAGE_SIZE;
  const [result, setResult] = useState<{ features: FlagOverview[]; total: number }>();
  const [error, setError] = useState<string>();
  const [creating, setCreating] = useState(false);
  const projects = useProjects();
  const tags = useTagOptions();

  const request = `/api/admin/search/features${query({
    query: filters.query,
    project: filters.project ? `IS:${filters.project}` : undefined,
    type: filters.type ? `IS:${filters.type}` : undefined,
    state: filters.state ? `IS:${filters.state}` : undefined,
    tag: filters.tag ? `INCLUDE:${filters.tag}` : undefined,
    archived: `IS:${props.archived}`,
    sortBy: filters.sortBy,
    sortOrder: filters.sortBy === 'createdAt' ? 'desc' : 'asc',
    offset,
    limit: PAGE_SIZE,
  })}`;
  const load = useCallback(() => {
    get<{ features: FlagOverview[]; total: number }>(request).then(
      (answer) => {
        setResult(answer);
        setError(undefined);
      },
      (failure: unknown) => setError(messageOf(failure)),
    );
  }, [request]);
  useEffect(load, [load]);
  useLiveReload(live, load);
  const toggle = useToggle(load);

  const base = props.archived ? '/archive' : '/';
  /** A new address for changed filters (back to page 1); typing replaces the address instead. */
  const set = (change: Partial<Filters>, replace = false) =>
    props.navigate(`${base}${searchOf({ ...filters, page: 1, ...change })}`, { replace });
  const onInput = (key: keyof Filters) => (event: Event) =>
    set({ [key]: (event.currentTarget as HTMLInputElement).value });
  const toPage = (page: number) => props.navigate(`${base}${searchOf({ ...filters, page })}`);

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

  // Flags of several projects: one column per environment any of them has, in their order.
  const environments: string[] = [];
  for (const flag of result?.features ?? []) {
    for (const environment of flag.environments) {
      if (!environments.includes(environment.name)) environments.push(environment.name);
    }
  }
  const total = result?.total ?? 0;
  const last = Math.min(offset + PAGE_SIZE, total);
  const projectName = (id: string) => projects.find((project) => project.id === id)?.name ?? id;
  const tagKnown =
    filters.tag === '' ||
    [...tags].some(([type, values]) => values.some((value) => `${type}:${value}` === filters.tag));
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
            props.navigate(`/flags/${enc(project)}/${enc(name)}`)} />`
        : null
    }
    <form class="filters" role="search" aria-label="Filter flags"
      onSubmit=${(event: Event) => event.preventDefault()}>
      <label class="grow">Search <input type="search" value=${filters.query}
        onInput=${(event: Event) => set({ query: (event.currentTarget as HTMLInputElement).value }, true)}
        placeholder="name, description or tag" /></label>
      <label>Project
        <select value=${filters.project} onChange=${onInput('project')}>
          <option value="">any</option>
          ${projects.map((project) => html`<option value=${project.id}>${project.name}</option>`)}
          ${
            filters.project && !projects.some((project) => project.id === filters.project)
              ? html`<option value=${filters.project}>${filters.project}</option>`
              : null
          }
        </select>
      </label>
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
      <label>Tag
        <select value=${filters.tag} onChange=${onInput('tag')}>
          <option value="">any</option>
          ${[...tags]
            .filter(([, values]) => values.length > 0)
            .map(
              ([type, values]) => html`<optgroup label=${type}>
                ${values.map((value) => html`<option value=${`${type}:${value}`}>${type}:${value}</option>`)}
              </optgroup>`,
            )}
          ${tagKnown ? null : html`<option value=${filters.tag}>${filters.tag}</option>`}
        </select>
      </label>
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
      <caption class="sr-only">Flags ${total === 0 ? 0 : offset + 1} to ${last} of ${total}</caption>
      <thead><tr>
        <th scope="col">Name</th><th scope="col">Project</th><th scope="col">Type</th>
        <th scope="col">Tags</th><th scope="col">Created</th>
        ${
          props.archived
            ? html`<th scope="col">Actions</th>`
            : environments.map((environment) => html`<th scope="col">${environment}</th>`)
        }
      </tr></thead>
      <tbody>
        ${result?.features.map(
          (flag) => html`<tr key=${flag.name}>
            <th scope="row" class="name">
              ${
                props.archived
                  ? flag.name
                  : html`<a href=${`/flags/${enc(flag.project)}/${enc(flag.name)}`}>${flag.name}</a>`
              }
              ${flag.stale ? html` <span class="badge">stale</span>` : null}
              ${flag.description ? html`<div class="muted description">${flag.description}</div>` : null}
            </th>
            <td data-label="Project">${projectName(flag.project)}</td>
            <td data-label="Type">${flag.type}</td>
            <td data-label="Tags">${flag.tags.map((tag) => html`<span class="tag">${tag.type}:${tag.value}</span> `)}</td>
            <td data-label="Created" class="muted">${formatTime(flag.createdAt)}</td>
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
                : environments.map((name) => {
                    const environment = flag.environments.find((entry) => entry.name === name);
                    return html`<td data-label=${name} class=${environment ? 'switch-cell' : 'switch-cell absent'}>${
                      environment
                        ? html`<${Switch}
                            checked=${environment.enabled}
                            disabled=${!session.canEdit}
                            label=${`${flag.name} in ${environment.name}`}
                            onChange=${(on: boolean) =>
                              toggle.request(
                                { flag, environment: environment.name, on },
                                environment.type,
                              )} />`
                        : null
                    }</td>`;
                  })
            }
          </tr>`,
        )}
      </tbody>
    </table>
    ${result && result.features.length === 0 ? html`<p class="muted">No flags match.</p>` : null}
    <nav class="pager" aria-label="Pages">
      <button type="button" class="secondary" disabled=${filters.page === 1}
        onClick=${() => toPage(filters.page - 1)}>Previous</button>
      <span role="status">${total === 0 ? 0 : offset + 1}–${last} of ${total}</span>
      <button type="button" class="secondary" disabled=${last >= total}
        onClick=${() => toPage(filters.page + 1)}>Next</button>
    </nav>
  </section>`;
}
