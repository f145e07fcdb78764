import { useCallback, useContext, useEffect, useState } from 'preact/hooks';
import { get, query } from '../api.js';
import { html, LiveContext, messageOf, Notice, useLiveReload } from '../kit.js';
import type { AuditEvent } from '../types.js';
import { EventList } from './history.js';

const PAGE_SIZE = 50;

/** The global event log: every change, newest first, searchable, paged on the server. */
export function EventLogPage() {
  const live = useContext(LiveContext);
  const [search, setSearch] = useState('');
  const [offset, setOffset] = useState(0);
  const [result, setResult] = useState<{ events: AuditEvent[]; total: number }>();
  const [error, setError] = useState<string>();
  const load = useCallback(() => {
    get<{ events: AuditEvent[]; total: number }>(
      `/api/admin/search/events${query({ query: search, offset, limit: PAGE_SIZE })}`,
    ).then(setResult, (failure: unknown) => setError(messageOf(failure)));
  }, [search, offset]);
  useEffect(load, [load]);
  useLiveReload(live, load);
  const total = result?.total ?? 0;
  return html`<section aria-labelledby="log-title">
    <h1 id="log-title">Event log</h1>
    <form class="filters" role="search" onSubmit=${(event: Event) => event.preventDefault()}>
      <label class="grow">Search <input type="search" value=${search}
        onInput=${(event: Event) => {
          setSearch((event.currentTarget as HTMLInputElement).value);
          setOffset(0);
        }} /></label>
    </form>
    <${Notice} error=${error} />
    <${EventList} events=${result?.events ?? []} showFeature=${true} />
    <nav class="pager" aria-label="Event pages">
      <button type="button" class="secondary" disabled=${offset === 0}
        onClick=${() => setOffset(Math.max(0, offset - PAGE_SIZE))}>Newer</button>
      <span>${total === 0 ? 0 : offset + 1}–${Math.min(offset + PAGE_SIZE, total)} of ${total}</span>
      <button type="button" class="secondary" disabled=${offset + PAGE_SIZE >= total}
        onClick=${() => setOffset(offset + PAGE_SIZE)}>Older</button>
    </nav>
  </section>`;
}
