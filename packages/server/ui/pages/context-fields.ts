import { useCallback, useContext, useEffect, useState } from 'preact/hooks';
import { api, enc, get } from '../api.js';
import { html, LiveContext, messageOf, Notice, SessionContext, useLiveReload } from '../kit.js';
import type { ContextField } from '../types.js';

/** Where a context field is used (`GET /api/admin/context/:name/strategies`), when opened. */
function FieldUsage(props: { name: string }) {
  const [usage, setUsage] = useState<string>();
  useEffect(() => {
    get<{ strategies?: { featureName: string; environment: string }[] }>(
      `/api/admin/context/${enc(props.name)}/strategies`,
    ).then(
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
  }, [props.name]);
  return html`<p class="muted">${usage ?? 'Looking up where it is used…'}</p>`;
}

export function ContextFieldsPage() {
  const session = useContext(SessionContext);
  const live = useContext(LiveContext);
  const [fields, setFields] = useState<ContextField[]>([]);
  const [error, setError] = useState<string>();
  const load = useCallback(() => {
    get<ContextField[]>('/api/admin/context').then(setFields, (failure: unknown) =>
      setError(messageOf(failure)),
    );
  }, []);
  useEffect(load, [load]);
  useLiveReload(live, load);
  const create = async (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const data = new FormData(form);
    const legal = String(data.get('legalValues') ?? '')
      .split(',')
      .map((value) => value.trim())
      .filter((value) => value !== '');
    try {
      await api('POST', '/api/admin/context', {
        name: String(data.get('name')),
        description: String(data.get('description') ?? ''),
        stickiness: data.get('stickiness') === 'on',
        legalValues: legal.map((value) => ({ value })),
      });
      form.reset();
      setError(undefined);
      load();
    } catch (failure) {
      setError(messageOf(failure));
    }
  };
  return html`<section aria-labelledby="fields-title">
    <h1 id="fields-title">Context fields</h1>
    <${Notice} error=${error} />
    <table>
      <thead><tr><th scope="col">Name</th><th scope="col">Description</th><th scope="col">Legal values</th>
        <th scope="col">Stickiness</th><th scope="col">Used by</th></tr></thead>
      <tbody>${fields.map(
        (field) => html`<tr key=${field.name}>
          <th scope="row">${field.name}</th>
          <td>${field.description}</td>
          <td>${(field.legalValues ?? []).map((legal) => legal.value).join(', ')}</td>
          <td>${field.stickiness ? 'yes' : 'no'}</td>
          <td><details><summary>Show</summary><${FieldUsage} name=${field.name} /></details></td>
        </tr>`,
      )}</tbody>
    </table>
    ${
      session.canEdit
        ? html`<form class="card" onSubmit=${create} aria-labelledby="new-field-title">
            <h2 id="new-field-title">New context field</h2>
            <div class="row">
              <label>Name <input name="name" required maxlength="100" /></label>
              <label class="grow">Description <input name="description" /></label>
              <label class="grow">Legal values (comma-separated) <input name="legalValues" /></label>
              <label class="inline"><input type="checkbox" name="stickiness" /> Usable as stickiness</label>
              <button type="submit">Create field</button>
            </div>
          </form>`
        : null
    }
  </section>`;
}
