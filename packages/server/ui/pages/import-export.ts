import { useContext, useEffect, useRef, useState } from 'preact/hooks';
import { api, get } from '../api.js';
import { html, messageOf, Notice, SessionContext } from '../kit.js';
import type { Tag } from '../types.js';

interface ValidationItem {
  message: string;
  affectedItems: string[];
}

/** `POST /api/admin/features-batch/validate`'s answer (unleash-server's). */
interface Validation {
  errors: ValidationItem[];
  warnings: ValidationItem[];
  permissions: ValidationItem[];
}

/** An export (unleash-server's format): only `features` is read here; the server checks the rest. */
interface ExportData {
  features: { name: string }[];
  [key: string]: unknown;
}

interface Choices {
  projects: { id: string; name: string }[];
  environments: { name: string; enabled?: boolean }[];
  tags: Tag[];
}

function useChoices(): [Choices, string | undefined] {
  const [choices, setChoices] = useState<Choices>({ projects: [], environments: [], tags: [] });
  const [error, setError] = useState<string>();
  useEffect(() => {
    Promise.all([
      get<{ projects: Choices['projects'] }>('/api/admin/projects'),
      get<{ environments: Choices['environments'] }>('/api/admin/environments'),
      get<{ tags: Tag[] }>('/api/admin/tags'),
    ]).then(
      ([projects, environments, tags]) =>
        setChoices({
          projects: projects.projects,
          environments: environments.environments,
          tags: tags.tags,
        }),
      (failure: unknown) => setError(messageOf(failure)),
    );
  }, []);
  return [choices, error];
}

/**
 * The export in a file: an export itself, or an import request (`{ project, environment, data }`)
 * whose `data` is one. Anything else is refused here with the reason.
 */
export function exportOf(text: string): ExportData {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (failure) {
    throw new Error(`The file is not JSON: ${messageOf(failure)}`);
  }
  const candidate =
    parsed !== null && typeof parsed === 'object' && 'data' in parsed && !('features' in parsed)
      ? (parsed as { data: unknown }).data
      : parsed;
  if (
    candidate === null ||
    typeof candidate !== 'object' ||
    !Array.isArray((candidate as { features?: unknown }).features)
  ) {
    throw new Error('The file is not an export: it has no "features" list.');
  }
  return candidate as ExportData;
}

function ValidationList(props: { title: string; items: ValidationItem[]; kind: string }) {
  if (props.items.length === 0) return null;
  return html`<div class=${`validation ${props.kind}`}>
    <h3>${props.title}</h3>
    <ul>
      ${props.items.map(
        (item) =>
          html`<li>${item.message}${
            item.affectedItems.length > 0
              ? html` <span class="muted">(${item.affectedItems.join(', ')})</span>`
              : null
          }</li>`,
      )}
    </ul>
  </div>`;
}

/** Export: the flags of a project or with a tag, as configured in one environment, as a file. */
function ExportForm(props: { choices: Choices }) {
  const [error, setError] = useState<string>();
  const [download, setDownload] = useState<{ url: string; file: string; count: number }>();
  useEffect(() => () => download && URL.revokeObjectURL(download.url), [download]);
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const environment = String(form.get('environment') ?? '');
    const project = String(form.get('project') ?? '');
    const tag = String(form.get('tag') ?? '');
    setError(undefined);
    try {
      const data = await api<ExportData>('POST', '/api/admin/features-batch/export', {
        environment,
        ...(project ? { project } : {}),
        ...(tag ? { tag } : {}),
      });
      const file = `export-${[project, tag.replace(':', '-'), environment].filter(Boolean).join('-')}.json`;
      const url = URL.createObjectURL(
        new Blob([JSON.stringify(data, null, 2)], { type: 'application/json' }),
      );
      setDownload({ url, file, count: data.features.length });
    } catch (failure) {
      setError(messageOf(failure));
    }
  };
  const { projects, environments, tags } = props.choices;
  return html`<form class="card" onSubmit=${submit} aria-labelledby="export-title">
    <h2 id="export-title">Export</h2>
    <p class="muted">The flags of a project, or those with a tag (all active flags when neither is
      chosen), with their strategies, variants, tags and what they depend on in one environment.</p>
    <div class="row">
      <label>Environment
        <select name="environment" required>
          ${environments.map((environment) => html`<option>${environment.name}</option>`)}
        </select>
      </label>
      <label>Project
        <select name="project">
          <option value="">any</option>
          ${projects.map((project) => html`<option value=${project.id}>${project.name}</option>`)}
        </select>
      </label>
      <label>Tag
        <select name="tag">
          <option value="">any</option>
          ${tags.map((tag) => html`<option>${tag.type}:${tag.value}</option>`)}
        </select>
      </label>
      <button type="submit">Export</button>
    </div>
    <${Notice} error=${error} />
    ${
      download
        ? html`<p class="notice" role="status">${download.count} ${download.count === 1 ? 'flag' : 'flags'} exported.${' '}
            <a href=${download.url} download=${download.file} data-external>Download ${download.file}</a></p>`
        : null
    }
  </form>`;
}

/** Import: a file read in the browser, validated by the server, applied when nothing stops it. */
function ImportForm(props: { choices: Choices; canEdit: boolean }) {
  const [data, setData] = useState<ExportData>();
  const [file, setFile] = useState<string>();
  const [target, setTarget] = useState({ project: 'default', environment: '' });
  const [validation, setValidation] = useState<Validation>();
  const [error, setError] = useState<string>();
  const [done, setDone] = useState<string>();
  const [busy, setBusy] = useState(false);
  const fileInput = useRef<HTMLInputElement>(null);
  const { projects, environments } = props.choices;
  const environment = target.environment || environments[0]?.name || '';

  const reset = () => {
    setValidation(undefined);
    setDone(undefined);
    setError(undefined);
  };
  const onFile = async (event: Event) => {
    reset();
    setData(undefined);
    const chosen = (event.currentTarget as HTMLInputElement).files?.[0];
    if (!chosen) return;
    setFile(chosen.name);
    try {
      setData(exportOf(await chosen.text()));
    } catch (failure) {
      setError(messageOf(failure));
    }
  };
  const request = () => ({ project: target.project, environment, data });
  const validate = async (event: Event) => {
    event.preventDefault();
    if (!data) return;
    reset();
    setBusy(true);
    try {
      setValidation(await api<Validation>('POST', '/api/admin/features-batch/validate', request()));
    } catch (failure) {
      setError(messageOf(failure));
    } finally {
      setBusy(false);
    }
  };
  const apply = async () => {
    if (!data) return;
    setBusy(true);
    setError(undefined);
    try {
      await api('POST', '/api/admin/features-batch/import', request());
      setValidation(undefined);
      setDone(
        `Imported ${data.features.length} ${data.features.length === 1 ? 'flag' : 'flags'} into ${target.project} (${environment}).`,
      );
      setData(undefined);
      setFile(undefined);
      if (fileInput.current) fileInput.current.value = '';
    } catch (failure) {
      setError(messageOf(failure));
    } finally {
      setBusy(false);
    }
  };
  const blocked = validation === undefined || validation.errors.length > 0;
  return html`<form class="card" onSubmit=${validate} aria-labelledby="import-title">
    <h2 id="import-title">Import</h2>
    <p class="muted">An export file (from this server or unleash-server) into one project and
      environment: checked first, then applied in one transaction.</p>
    <div class="row">
      <label class="grow">Export file
        <input type="file" accept=".json,application/json" required ref=${fileInput}
          onChange=${onFile} />
      </label>
      <label>Into project
        <select value=${target.project} onChange=${(event: Event) => {
          reset();
          setTarget({ ...target, project: (event.currentTarget as HTMLSelectElement).value });
        }}>
          ${projects.map((project) => html`<option value=${project.id}>${project.name}</option>`)}
        </select>
      </label>
      <label>Environment
        <select value=${environment} onChange=${(event: Event) => {
          reset();
          setTarget({ ...target, environment: (event.currentTarget as HTMLSelectElement).value });
        }}>
          ${environments.map((entry) => html`<option>${entry.name}</option>`)}
        </select>
      </label>
      <button type="submit" class="secondary" disabled=${!data || busy}>Validate</button>
    </div>
    ${
      data && !validation
        ? html`<p class="muted">${file}: ${data.features.length} ${data.features.length === 1 ? 'flag' : 'flags'}.</p>`
        : null
    }
    <${Notice} error=${error} info=${done} />
    ${
      validation
        ? html`<section class="validation-result" aria-labelledby="validation-title">
            <h3 id="validation-title">Validation of ${file}</h3>
            ${
              validation.errors.length +
                validation.warnings.length +
                validation.permissions.length ===
              0
                ? html`<p role="status">No problems: ${data?.features.length ?? 0} flags can be imported.</p>`
                : html`<p role="status">${validation.errors.length} ${validation.errors.length === 1 ? 'error' : 'errors'}, ${validation.warnings.length} ${validation.warnings.length === 1 ? 'warning' : 'warnings'}.</p>`
            }
            <${ValidationList} title="Errors (nothing is imported while there are any)"
              items=${validation.errors} kind="error" />
            <${ValidationList} title="Permissions needed" items=${validation.permissions} kind="error" />
            <${ValidationList} title="Warnings" items=${validation.warnings} kind="warning" />
            ${
              props.canEdit
                ? html`<div class="actions">
                    <button type="button" disabled=${blocked || busy} onClick=${apply}>
                      Import ${data?.features.length ?? 0} flags</button>
                  </div>`
                : html`<p class="muted">A Viewer can validate an import but not apply it.</p>`
            }
          </section>`
        : null
    }
  </form>`;
}

/** Import and export of flags in unleash-server's format (`/api/admin/features-batch/*`). */
export function ImportExportPage() {
  const session = useContext(SessionContext);
  const [choices, error] = useChoices();
  return html`<section aria-labelledby="import-export-title">
    <h1 id="import-export-title">Import and export</h1>
    <${Notice} error=${error} />
    <${ImportForm} choices=${choices} canEdit=${session.canEdit} />
    <${ExportForm} choices=${choices} />
  </section>`;
}
