import { useCallback, useContext, useEffect, useState } from 'preact/hooks';
import { get, query } from '../api.js';
import { formatTime, html, LiveContext, messageOf, Notice, useLiveReload } from '../kit.js';
import type { AuditEvent } from '../types.js';

type DiffLine = { kind: ' ' | '-' | '+'; text: string };

/** Longest-common-subsequence line diff; beyond `MAX_CELLS` both sides are shown whole. */
const MAX_CELLS = 250_000;

export function lineDiff(before: string[], after: string[]): DiffLine[] {
  if (before.length * after.length > MAX_CELLS) {
    return [
      ...before.map((text) => ({ kind: '-' as const, text })),
      ...after.map((text) => ({ kind: '+' as const, text })),
    ];
  }
  const rows = before.length + 1;
  const cols = after.length + 1;
  const table = new Uint32Array(rows * cols);
  for (let i = before.length - 1; i >= 0; i--) {
    for (let j = after.length - 1; j >= 0; j--) {
      table[i * cols + j] =
        before[i] === after[j]
          ? table[(i + 1) * cols + j + 1]! + 1
          : Math.max(table[(i + 1) * cols + j]!, table[i * cols + j + 1]!);
    }
  }
  const lines: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < before.length && j < after.length) {
    if (before[i] === after[j]) {
      lines.push({ kind: ' ', text: before[i]! });
      i++;
      j++;
    } else if (table[(i + 1) * cols + j]! >= table[i * cols + j + 1]!) {
      lines.push({ kind: '-', text: before[i++]! });
    } else {
      lines.push({ kind: '+', text: after[j++]! });
    }
  }
  while (i < before.length) lines.push({ kind: '-', text: before[i++]! });
  while (j < after.length) lines.push({ kind: '+', text: after[j++]! });
  return lines;
}

const jsonLines = (value: unknown) =>
  value === undefined || value === null ? [] : JSON.stringify(value, null, 2).split('\n');

export function EventDiff(props: { event: AuditEvent }) {
  const lines = lineDiff(jsonLines(props.event.preData), jsonLines(props.event.data));
  if (lines.length === 0) return html`<p class="muted">No data recorded.</p>`;
  return html`<pre class="diff" aria-label=${`Changes of event ${props.event.id}`}>${lines.map(
    (
      line,
    ) => html`<span class=${line.kind === '+' ? 'add' : line.kind === '-' ? 'del' : ''}>${line.kind} ${line.text}
</span>`,
  )}</pre>`;
}

/** Events, newest first, each opening to the diff of its data. */
export function EventList(props: { events: AuditEvent[]; showFeature?: boolean }) {
  return html`<ol class="events">
    ${props.events.map(
      (event) => html`<li key=${event.id}>
        <details>
          <summary>
            <strong>${event.type}</strong>
            ${props.showFeature && event.featureName ? html` · ${event.featureName}` : null}
            ${props.showFeature && event.project ? html` <span class="muted">in ${event.project}</span>` : null}
            ${event.environment ? html` · ${event.environment}` : null}
            <span class="muted"> by ${event.createdBy}, ${formatTime(event.createdAt)}</span>
          </summary>
          <${EventDiff} event=${event} />
        </details>
      </li>`,
    )}
  </ol>`;
}

const PAGE_SIZE = 25;

/** A flag's history (`GET /api/admin/search/events?feature=…`), following live changes. */
export function FlagHistory(props: { feature: string; version: number }) {
  const live = useContext(LiveContext);
  const [offset, setOffset] = useState(0);
  const [result, setResult] = useState<{ events: AuditEvent[]; total: number }>();
  const [error, setError] = useState<string>();
  const load = useCallback(() => {
    get<{ events: AuditEvent[]; total: number }>(
      `/api/admin/search/events${query({ feature: `IS:${props.feature}`, offset, limit: PAGE_SIZE })}`,
    ).then(setResult, (failure: unknown) => setError(messageOf(failure)));
  }, [props.feature, offset]);
  useEffect(load, [load, props.version]);
  useLiveReload(live, load, props.feature);
  const total = result?.total ?? 0;
  return html`<section class="card" aria-labelledby="history-title">
    <h2 id="history-title">History</h2>
    <${Notice} error=${error} />
    <${EventList} events=${result?.events ?? []} />
    <nav class="pager" aria-label="History pages">
      <button type="button" class="secondary" disabled=${offset === 0}
        onClick=${() => setOffset(Math.max(0, offset - PAGE_SIZE))}>Newer</button>
      <span>${total === 0 ? 0 : offset + 1}–${Math.min(offset + PAGE_SIZE, total)} of ${total}</span>
      <button type="button" class="secondary" disabled=${offset + PAGE_SIZE >= total}
        onClick=${() => setOffset(offset + PAGE_SIZE)}>Older</button>
    </nav>
  </section>`;
}
