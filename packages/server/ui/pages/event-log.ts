import { useCallback, useContext, useEffect, useState } from 'preact/hooks';
import { EVENT_TYPES } from '../../src/features/events/event-types.js';
import { get, query } from '../api.js';
import { html, LiveContext, messageOf, type Navigate, Notice, useLiveReload } from '../kit.js';
import type { AuditEvent } from '../types.js';
import { EventList } from './history.js';

const PAGE_SIZE = 50;

/** Every event type the server records, for the type filter. */
const TYPES: readonly string[] = [...new Set<string>(Object.values(EVENT_TYPES))].sort();

/** unleash-server's event search filters, as the address holds them (`?type=…&from=…&page=2`). */
interface EventFilters {
  query: string;
  type: string;
  createdBy: string;
  project: string;
  feature: string;
  /** `YYYY-MM-DD`, both included. */
  from: string;
  to: string;
  /** From 1. */
  page: number;
}

const KEYS = ['query', 'type', 'createdBy', 'project', 'feature', 'from', 'to'] as const;

function filtersOf(search: string): EventFilters {
  const params = new URLSearchParams(search);
  const page = Number.parseInt(params.get('page') ?? '', 10);
  const filters = { page: Number.isSafeInteger(page) && page > 1 ? page : 1 } as EventFilters;
  for (const key of KEYS) filters[key] = params.get(key) ?? '';
  return filters;
}

const searchOf = (filters: EventFilters) =>
  query({
    ...Object.fromEntries(KEYS.map((key) => [key, filters[key]])),
    page: filters.page > 1 ? filters.page : undefined,
  });

/** `IS:value` for a set filter. */
const is = (value: string) => (value ? `IS:${value}` : undefined);

/**
 * The global event log: every change, newest first, filtered as unleash-server's event search
 * filters (type, user, project, flag, dates) and searchable; the filters and page are in the
 * address.
 */
export function EventLogPage(props: { search: string; navigate: Navigate }) {
  const live = useContext(LiveContext);
  const filters = filtersOf(props.search);
  const offset = (filters.page - 1) * PAGE_SIZE;
  const [result, setResult] = useState<{ events: AuditEvent[]; total: number }>();
  const [error, setError] = useState<string>();
  const [projects, setProjects] = useState<{ id: string; name: string }[]>([]);
  useEffect(() => {
    get<{ projects: { id: string; name: string }[] }>('/api/admin/projects').then(
      (answer) => setProjects(answer.projects),
      () => setProjects([]),
    );
  }, []);
  const request = `/api/admin/search/events${query({
    query: filters.query,
    type: is(filters.type),
    createdBy: is(filters.createdBy),
    project: is(filters.project),
    feature: is(filters.feature),
    from: is(filters.from),
    to: is(filters.to),
    offset,
    limit: PAGE_SIZE,
  })}`;
  const load = useCallback(() => {
    get<{ events: AuditEvent[]; total: number }>(request).then(
      (answer) => {
        setResult(answer);
        setError(undefined);
      },
      (failure: unknown) => setError(messageOf(failure)),
    );
  }, [request]);
  useEffect(load, [load]);
  useLiveReload(live, load);

  /** Changed filters: back to the first page; typed text replaces the address's entry. */
  const set = (key: (typeof KEYS)[number], replace: boolean) => (event: Event) =>
    props.navigate(
      `/events${searchOf({ ...filters, page: 1, [key]: (event.currentTarget as HTMLInputElement).value })}`,
      { replace },
    );
  const toPage = (page: number) => props.navigate(`/events${searchOf({ ...filters, page })}`);
  const total = result?.total ?? 0;
  const last = Math.min(offset + PAGE_SIZE, total);
  const filtered = KEYS.some((key) => filters[key] !== '');
  return html`<section aria-labelledby="log-title">
    <h1 id="log-title">Event log</h1>
    <form class="filters" role="search" aria-label="Filter events"
      onSubmit=${(event: Event) => event.preventDefault()}>
      <label class="grow">Search <input type="search" value=${filters.query}
        onInput=${set('query', true)} placeholder="any text of an event" /></label>
      <label>Type
        <select value=${filters.type} onChange=${set('type', false)}>
          <option value="">any</option>
          ${TYPES.map((type) => html`<option>${type}</option>`)}
          ${filters.type && !TYPES.includes(filters.type) ? html`<option>${filters.type}</option>` : null}
        </select>
      </label>
      <label>User <input value=${filters.createdBy} onChange=${set('createdBy', false)}
        placeholder="name, e-mail or id" size="16" /></label>
      <label>Project
        <select value=${filters.project} onChange=${set('project', false)}>
          <option value="">any</option>
          ${projects.map((project) => html`<option value=${project.id}>${project.name}</option>`)}
          ${
            filters.project && !projects.some((project) => project.id === filters.project)
              ? html`<option>${filters.project}</option>`
              : null
          }
        </select>
      </label>
      <label>Flag <input value=${filters.feature} onChange=${set('feature', false)}
        placeholder="flag name" size="16" /></label>
      <label>From <input type="date" value=${filters.from} onChange=${set('from', false)} /></label>
      <label>To <input type="date" value=${filters.to} onChange=${set('to', false)} /></label>
      ${
        filtered
          ? html`<button type="button" class="secondary"
              onClick=${() => props.navigate('/events')}>Clear filters</button>`
          : null
      }
    </form>
    <${Notice} error=${error} />
    <${EventList} events=${result?.events ?? []} showFeature=${true} />
    ${result && result.events.length === 0 ? html`<p class="muted">No events match.</p>` : null}
    <nav class="pager" aria-label="Event pages">
      <button type="button" class="secondary" disabled=${filters.page === 1}
        onClick=${() => toPage(filters.page - 1)}>Newer</button>
      <span role="status">${total === 0 ? 0 : offset + 1}–${last} of ${total}</span>
      <button type="button" class="secondary" disabled=${last >= total}
        onClick=${() => toPage(filters.page + 1)}>Older</button>
    </nav>
  </section>`;
}
