import { useCallback, useContext, useEffect, useState } from 'preact/hooks';
import { api, enc, get } from '../api.js';
import { html, LiveContext, messageOf, Notice, SessionContext, useLiveReload } from '../kit.js';
import type { Constraint, ContextField, Segment } from '../types.js';
import { ConstraintsEditor, describeConstraint } from './constraints.js';

interface Usage {
  strategies?: { featureName: string; environment: string; projectId?: string }[];
}

/** Where a segment is used (`GET /api/admin/segments/:id/strategies`), loaded when opened. */
function SegmentUsage(props: { id: number }) {
  const [usage, setUsage] = useState<string>();
  useEffect(() => {
    get<Usage>(`/api/admin/segments/${props.id}/strategies`).then(
      (answer) => {
        const uses = answer.strategies ?? [];
        setUsage(
          uses.length === 0
            ? 'Not used by any strategy.'
            : `Used by ${uses.map((use) => `${use.featureName} (${use.environment})`).join(', ')}`,
        );
      },
      (failure: unknown) => setUsage(`Where it is used is not available: ${messageOf(failure)}`),
    );
  }, [props.id]);
  return html`<p class="muted">${usage ?? 'Looking up where it is used…'}</p>`;
}

export function SegmentsPage() {
  const session = useContext(SessionContext);
  const live = useContext(LiveContext);
  const [segments, setSegments] = useState<Segment[]>([]);
  const [fields, setFields] = useState<ContextField[]>([]);
  const [constraints, setConstraints] = useState<Constraint[]>([]);
  const [error, setError] = useState<string>();
  const load = useCallback(() => {
    Promise.all([
      get<{ segments: Segment[] }>('/api/admin/segments'),
      get<ContextField[]>('/api/admin/context'),
    ]).then(
      ([answer, context]) => {
        setSegments(answer.segments);
        setFields(context);
      },
      (failure: unknown) => setError(messageOf(failure)),
    );
  }, []);
  useEffect(load, [load]);
  useLiveReload(live, load);
  const create = async (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const data = new FormData(form);
    try {
      await api('POST', '/api/admin/segments', {
        name: String(data.get('name')),
        description: String(data.get('description') ?? '') || null,
        constraints,
      });
      form.reset();
      setConstraints([]);
      setError(undefined);
      load();
    } catch (failure) {
      setError(messageOf(failure));
    }
  };
  const remove = async (segment: Segment) => {
    if (!window.confirm(`Delete segment ${segment.name}?`)) return;
    try {
      await api('DELETE', `/api/admin/segments/${enc(String(segment.id))}`);
      load();
    } catch (failure) {
      setError(messageOf(failure));
    }
  };
  return html`<section aria-labelledby="segments-title">
    <h1 id="segments-title">Segments</h1>
    <${Notice} error=${error} />
    <ul class="cards">
      ${segments.map(
        (segment) => html`<li class="card" key=${segment.id}>
          <div class="title-row"><h2>${segment.name}</h2>
            ${session.canEdit ? html`<button type="button" class="danger" onClick=${() => remove(segment)}>Delete</button>` : null}
          </div>
          ${segment.description ? html`<p>${segment.description}</p>` : null}
          <ul class="constraint-list">${segment.constraints.map((constraint) => html`<li>${describeConstraint(constraint)}</li>`)}</ul>
          <details><summary>Where it is used</summary><${SegmentUsage} id=${segment.id} /></details>
        </li>`,
      )}
    </ul>
    ${
      session.canEdit
        ? html`<form class="card" onSubmit=${create} aria-labelledby="new-segment-title">
            <h2 id="new-segment-title">New segment</h2>
            <div class="row">
              <label>Name <input name="name" required maxlength="100" /></label>
              <label class="grow">Description <input name="description" /></label>
            </div>
            <${ConstraintsEditor} idPrefix="new-segment" constraints=${constraints} fields=${fields}
              onChange=${setConstraints} />
            <button type="submit">Create segment</button>
          </form>`
        : null
    }
  </section>`;
}
