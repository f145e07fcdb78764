/**
 * One shape for an admin resource's page: a table of what exists, one form that creates and edits,
 * delete behind a confirmation with the server's in-use answer shown, the server's errors put
 * beside the fields they name, and read-only for roles that may not write. A page declares its
 * columns, fields and Admin API calls (`ResourceSpec`); this module does the rest.
 */
import { useCallback, useContext, useEffect, useRef, useState } from 'preact/hooks';
import { ApiFailure } from './api.js';
import {
  ConfirmDialog,
  html,
  LiveContext,
  messageOf,
  Notice,
  type Session,
  SessionContext,
  useLiveReload,
} from './kit.js';

/** What a role may do on the admin API (the server's `read` / `edit` / `admin`). */
export type Permission = 'read' | 'edit' | 'admin';

/** Whether the signed-in person's role allows `permission` (the server checks again). */
export function may(session: Session, permission: Permission): boolean {
  if (permission === 'read') return true;
  if (permission === 'edit') return session.role !== 'viewer';
  return session.role === 'admin';
}

/** A form's values, by field name. */
export type Values = Record<string, unknown>;

/** What a custom field editor gets: its value, a setter, an id for its label and its error. */
export interface FieldProps {
  readonly id: string;
  readonly value: unknown;
  readonly set: (value: unknown) => void;
  readonly values: Values;
  readonly error: string | undefined;
}

export interface ResourceField<T, X> {
  /** The key in `Values` (and, by default, in the item and the request body). */
  readonly name: string;
  readonly label: string;
  readonly type?:
    | 'text'
    | 'textarea'
    | 'number'
    | 'checkbox'
    | 'select'
    | 'list'
    | 'datetime'
    | 'email'
    | 'password';
  readonly required?: boolean;
  readonly maxLength?: number;
  /** A hint under the field (the rule it follows). */
  readonly hint?: string;
  /** `select`: its choices (from the page's extra data). */
  readonly options?: (extra: X, values: Values) => readonly { value: string; label: string }[];
  /** The item's key: set when created, shown but not changed when edited. */
  readonly fixed?: boolean;
  /** Only in the create form. */
  readonly createOnly?: boolean;
  /** Shown only while this holds (e.g. a token's environment, not for admin tokens). */
  readonly when?: (values: Values, extra: X) => boolean;
  /** The value a new item's form starts with. */
  readonly initial?: (extra: X) => unknown;
  /** The value an item's edit form starts with (default: the item's property of `name`). */
  readonly read?: (item: T) => unknown;
  /** An editor of its own (constraints, parameters…) instead of an input. */
  readonly render?: (props: FieldProps, extra: X) => unknown;
}

export interface ResourceColumn<T, X> {
  readonly label: string;
  readonly cell: (item: T, extra: X) => unknown;
}

/** What a row's own buttons and details get: the page's extra data, its changes and its notice. */
export interface RowContext<X> {
  readonly extra: X;
  readonly writable: boolean;
  /** Sends a change (`request`), says `info` when given and lists again; a refusal is reported. */
  readonly change: (request: () => Promise<unknown>, info?: string) => Promise<void>;
  readonly report: (notice: { error?: unknown; info?: string }) => void;
}

export interface ResourceSpec<T, X = undefined> {
  /** For element ids (`context-fields`). */
  readonly id: string;
  /** The heading (`Context fields`); `level` 2 when the page holds more than one resource. */
  readonly title: string;
  readonly level?: 1 | 2;
  /** One of them, in a sentence (`context field`). */
  readonly noun: string;
  /** A line under the heading: what the resource is for. */
  readonly intro?: string;
  /** What writing needs (`edit`: Editors and Admins; `admin`: Admins only). */
  readonly write: Permission;
  readonly list: () => Promise<T[]>;
  /** Data the fields and columns need besides the list (context fields, projects…). */
  readonly extra?: () => Promise<X>;
  readonly key: (item: T) => string;
  /** The item's name in a sentence or a button's label. */
  readonly label: (item: T) => string;
  readonly columns: readonly ResourceColumn<T, X>[];
  readonly fields: readonly ResourceField<T, X>[];
  /** Creates one; what it returns goes to `created`. */
  readonly create?: (values: Values, extra: X) => Promise<unknown>;
  /** Shown once after a creation (a token's secret), until dismissed. */
  readonly created?: (answer: unknown, values: Values) => unknown;
  readonly update?: (item: T, values: Values, extra: X) => Promise<unknown>;
  readonly remove?: (item: T) => Promise<unknown>;
  /** The delete button's word (`Delete`, `Revoke`). */
  readonly removeLabel?: string;
  /** Whether an item can be edited or deleted at all (built-in strategies cannot). */
  readonly editable?: (item: T) => boolean;
  readonly removable?: (item: T) => boolean;
  /** More buttons in a row (enable, disable, reset password…). */
  readonly actions?: (item: T, row: RowContext<X>) => unknown;
  /** What opens under a row on demand (where it is used, its environments…). */
  readonly details?: {
    readonly label: string;
    readonly render: (item: T, row: RowContext<X>) => unknown;
  };
  /** The text of an empty list. */
  readonly empty?: string;
}

/** The field a server detail names: its `path`, or `body/<field>…` / `required property 'x'`. */
function fieldOf(detail: { message: string; path?: string }, names: readonly string[]) {
  const candidates = [
    detail.path?.replace(/^\/?(body\/)?/, '').split('/')[0],
    /^body\/([^/\s]+)/.exec(detail.message)?.[1],
    /required property '([^']+)'/.exec(detail.message)?.[1],
  ];
  return candidates.find((name) => name !== undefined && names.includes(name));
}

/** Splits a refusal into messages by field and what names no field. */
export function errorsByField(
  failure: unknown,
  names: readonly string[],
): { fields: Record<string, string>; general?: string } {
  if (!(failure instanceof ApiFailure) || failure.details.length === 0) {
    return { fields: {}, general: messageOf(failure) };
  }
  const fields: Record<string, string> = {};
  const rest: string[] = [];
  for (const detail of failure.details) {
    const name = fieldOf(detail, names);
    if (name === undefined) rest.push(detail.message);
    else fields[name] ??= detail.message.replace(/^body\/\S+\s/, '');
  }
  if (rest.length === 0) return { fields };
  return { fields, general: failure.details.length === rest.length ? failure.message : rest[0] };
}

/** A refusal shown at the top of the page: an in-use answer lists every user. */
interface PageNotice {
  readonly error?: string;
  readonly users?: readonly string[];
  readonly info?: string;
}

function noticeOf(error: unknown): PageNotice {
  if (error instanceof ApiFailure && error.code === 'IN_USE') {
    return { error: error.message, users: error.details.map((detail) => detail.message) };
  }
  return { error: messageOf(error) };
}

const fieldId = (specId: string, name: string) => `${specId}-field-${name}`;

/** One input of the form, labelled, with its hint and its error tied to it. */
function FieldInput<T, X>(props: {
  spec: ResourceSpec<T, X>;
  field: ResourceField<T, X>;
  values: Values;
  extra: X;
  editing: boolean;
  error: string | undefined;
  set: (name: string, value: unknown) => void;
}) {
  const { field, values, error } = props;
  const id = fieldId(props.spec.id, field.name);
  const value = values[field.name];
  const described =
    [field.hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ') ||
    undefined;
  const hint = field.hint ? html`<span id=${`${id}-hint`} class="hint">${field.hint}</span>` : null;
  const problem = error
    ? html`<span id=${`${id}-error`} class="field-error" role="alert">${error}</span>`
    : null;
  if (field.render) {
    return html`<div class="field wide">
      ${field.render({ id, value, values, error, set: (next) => props.set(field.name, next) }, props.extra)}
      ${hint}${problem}
    </div>`;
  }
  const common = {
    id,
    name: field.name,
    required: field.required,
    'aria-invalid': error ? 'true' : undefined,
    'aria-describedby': described,
    readOnly: props.editing && field.fixed,
  };
  const onInput = (event: Event) => {
    const target = event.currentTarget as HTMLInputElement;
    props.set(field.name, field.type === 'checkbox' ? target.checked : target.value);
  };
  if (field.type === 'checkbox') {
    return html`<div class="field">
      <label class="inline" for=${id}><input type="checkbox" ...${common}
        checked=${value === true} onChange=${onInput} /> ${field.label}</label>
      ${hint}${problem}
    </div>`;
  }
  let input: unknown;
  if (field.type === 'select') {
    const options = field.options?.(props.extra, values) ?? [];
    input = html`<select ...${common} disabled=${props.editing && field.fixed}
        value=${String(value ?? '')} onChange=${onInput}>
      ${options.map((option) => html`<option value=${option.value}>${option.label}</option>`)}
    </select>`;
  } else if (field.type === 'textarea') {
    input = html`<textarea ...${common} rows="3" maxLength=${field.maxLength}
      value=${String(value ?? '')} onInput=${onInput}></textarea>`;
  } else {
    const type =
      field.type === 'datetime' ? 'datetime-local' : field.type === 'list' ? 'text' : field.type;
    input = html`<input ...${common} type=${type ?? 'text'} maxLength=${field.maxLength}
      autocomplete=${field.type === 'password' ? 'new-password' : undefined}
      value=${String(value ?? '')} onInput=${onInput} />`;
  }
  return html`<div class=${field.type === 'textarea' || field.type === 'list' ? 'field wide' : 'field'}>
    <label for=${id}>${field.label}${field.required ? html`<span aria-hidden="true"> *</span>` : null}</label>
    ${input}${hint}${problem}
  </div>`;
}

/** The values a form starts with: an item's, or each field's initial one. */
function startValues<T, X>(spec: ResourceSpec<T, X>, extra: X, item: T | undefined): Values {
  const values: Values = {};
  for (const field of spec.fields) {
    if (item === undefined) {
      values[field.name] = field.initial?.(extra) ?? (field.type === 'checkbox' ? false : '');
    } else {
      const read = field.read ?? ((from: T) => (from as Record<string, unknown>)[field.name]);
      const value = read(item);
      values[field.name] =
        field.type === 'list' && Array.isArray(value) ? value.join(', ') : (value ?? '');
    }
  }
  return values;
}

/** `a, b , c` → `['a', 'b', 'c']`: how a `list` field's text is sent. */
export const listOf = (value: unknown): string[] =>
  String(value ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');

/** The text of an optional field: undefined when left empty. */
export const optional = (value: unknown): string | undefined => {
  const text = String(value ?? '').trim();
  return text === '' ? undefined : text;
};

type Editing<T> = { mode: 'closed' } | { mode: 'create' } | { mode: 'edit'; item: T };

/** The form that creates or edits one item. */
function ResourceForm<T, X>(props: {
  spec: ResourceSpec<T, X>;
  extra: X;
  editing: { mode: 'create' } | { mode: 'edit'; item: T };
  onDone: (answer: unknown, values: Values) => void;
  onCancel: () => void;
}) {
  const { spec, extra, editing } = props;
  const item = editing.mode === 'edit' ? editing.item : undefined;
  const [values, setValues] = useState<Values>(() => startValues(spec, extra, item));
  const [errors, setErrors] = useState<{ fields: Record<string, string>; general?: string }>({
    fields: {},
  });
  const [busy, setBusy] = useState(false);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);
  const fields = spec.fields.filter(
    (field) => !(item !== undefined && field.createOnly) && (field.when?.(values, extra) ?? true),
  );
  const set = (name: string, value: unknown) => {
    setValues((before) => ({ ...before, [name]: value }));
    setErrors((before) => {
      if (before.fields[name] === undefined) return before;
      const { [name]: _gone, ...rest } = before.fields;
      return { ...before, fields: rest };
    });
  };
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    try {
      const answer =
        item === undefined
          ? await spec.create?.(values, extra)
          : await spec.update?.(item, values, extra);
      props.onDone(answer, values);
    } catch (failure) {
      setErrors(
        errorsByField(
          failure,
          fields.map((field) => field.name),
        ),
      );
      setBusy(false);
    }
  };
  const titleId = `${spec.id}-form-title`;
  const title = item === undefined ? `New ${spec.noun}` : `Edit ${spec.noun} ${spec.label(item)}`;
  return html`<form class="card resource-form" aria-labelledby=${titleId} onSubmit=${submit}>
    <h2 id=${titleId} tabIndex="-1" ref=${heading}>${title}</h2>
    <div class="fields">
      ${fields.map(
        (
          field,
        ) => html`<${FieldInput} key=${field.name} spec=${spec} field=${field} values=${values}
          extra=${extra} editing=${item !== undefined} error=${errors.fields[field.name]} set=${set} />`,
      )}
    </div>
    <${Notice} error=${errors.general} />
    <div class="actions">
      <button type="button" class="secondary" onClick=${props.onCancel}>Cancel</button>
      <button type="submit" disabled=${busy}>${item === undefined ? `Create ${spec.noun}` : 'Save'}</button>
    </div>
  </form>`;
}

/** A resource's section: heading, notices, form, table. */
export function ResourcePage<T, X = undefined>(props: { spec: ResourceSpec<T, X> }) {
  const { spec } = props;
  const session = useContext(SessionContext);
  const live = useContext(LiveContext);
  const writable = may(session, spec.write);
  const [items, setItems] = useState<T[]>();
  const [extra, setExtra] = useState<X>();
  const [notice, setNotice] = useState<PageNotice>({});
  const [editing, setEditing] = useState<Editing<T>>({ mode: 'closed' });
  const [deleting, setDeleting] = useState<T>();
  const [created, setCreated] = useState<{ answer: unknown; values: Values }>();
  // When the form closes, the keyboard goes back to the button that opens it, or to what was
  // created (a secret to copy).
  const newButton = useRef<HTMLButtonElement>(null);
  const createdHeading = useRef<HTMLDivElement>(null);
  const formOpen = useRef(false);
  useEffect(() => {
    if (editing.mode !== 'closed') {
      formOpen.current = true;
      return;
    }
    if (!formOpen.current) return;
    formOpen.current = false;
    (createdHeading.current ?? newButton.current)?.focus();
  }, [editing.mode]);
  const load = useCallback(() => {
    Promise.all([spec.list(), spec.extra ? spec.extra() : Promise.resolve(undefined as X)]).then(
      ([list, more]) => {
        setItems(list);
        setExtra(() => more);
      },
      (failure: unknown) => setNotice(noticeOf(failure)),
    );
  }, [spec]);
  useEffect(load, [load]);
  useLiveReload(live, load);
  const report = useCallback((next: { error?: unknown; info?: string }) => {
    setNotice(next.error !== undefined ? noticeOf(next.error) : { info: next.info });
  }, []);
  const change = useCallback(
    async (request: () => Promise<unknown>, info?: string) => {
      try {
        await request();
        if (info !== undefined) setNotice({ info });
        load();
      } catch (failure) {
        setNotice(noticeOf(failure));
      }
    },
    [load],
  );
  const row: RowContext<X> = { extra: extra as X, writable, change, report };
  const headingId = `${spec.id}-title`;
  const Heading = spec.level === 2 ? 'h2' : 'h1';
  const remove = async (item: T) => {
    setDeleting(undefined);
    await change(
      async () => spec.remove?.(item),
      `${spec.label(item)} is ${spec.removeLabel === 'Revoke' ? 'revoked' : 'deleted'}.`,
    );
  };
  const canEdit = (item: T) => writable && (spec.editable?.(item) ?? true);
  const canRemove = (item: T) =>
    writable &&
    spec.remove !== undefined &&
    (spec.removable?.(item) ?? spec.editable?.(item) ?? true);
  return html`<section class="resource" aria-labelledby=${headingId}>
    <div class="title-row">
      <${Heading} id=${headingId}>${spec.title}<//>
      ${
        writable && spec.create && editing.mode === 'closed'
          ? html`<button type="button" ref=${newButton} onClick=${() => {
              setCreated(undefined);
              setEditing({ mode: 'create' });
            }}>New ${spec.noun}</button>`
          : null
      }
    </div>
    ${spec.intro ? html`<p class="muted">${spec.intro}</p>` : null}
    ${
      writable
        ? null
        : html`<p class="muted">Read-only: your role (${session.role}) cannot change ${spec.title.toLowerCase()}.</p>`
    }
    ${
      notice.error
        ? html`<div class="notice error" role="alert">
            <p>${notice.error}</p>
            ${notice.users && notice.users.length > 1 ? html`<ul>${notice.users.map((user) => html`<li>${user}</li>`)}</ul>` : null}
          </div>`
        : html`<${Notice} info=${notice.info} />`
    }
    ${
      created && spec.created
        ? html`<div class="card created" tabIndex="-1" ref=${createdHeading}>
            ${spec.created(created.answer, created.values)}
            <div class="actions"><button type="button" class="secondary"
              onClick=${() => setCreated(undefined)}>Done</button></div>
          </div>`
        : null
    }
    ${
      editing.mode !== 'closed' && (extra !== undefined || spec.extra === undefined)
        ? html`<${ResourceForm} key=${editing.mode === 'edit' ? spec.key(editing.item) : '+'}
            spec=${spec} extra=${extra} editing=${editing}
            onCancel=${() => setEditing({ mode: 'closed' })}
            onDone=${(answer: unknown, values: Values) => {
              const what = editing.mode === 'edit' ? spec.label(editing.item) : undefined;
              setEditing({ mode: 'closed' });
              if (what === undefined && spec.created) setCreated({ answer, values });
              setNotice({
                info: what === undefined ? `The ${spec.noun} is created.` : `${what} is saved.`,
              });
              load();
            }} />`
        : null
    }
    ${
      items === undefined
        ? html`<p role="status">Loading…</p>`
        : items.length === 0
          ? html`<p class="muted">${spec.empty ?? `No ${spec.title.toLowerCase()} yet.`}</p>`
          : html`<table class="resource-table" aria-labelledby=${headingId}>
              <thead><tr>
                ${spec.columns.map((column) => html`<th scope="col">${column.label}</th>`)}
                <th scope="col"><span class="sr-only">Actions</span></th>
              </tr></thead>
              <tbody>${items.map(
                (item) => html`<tr key=${spec.key(item)}>
                  ${spec.columns.map((column, index) =>
                    index === 0
                      ? html`<th scope="row" data-label=${column.label}>${column.cell(item, extra as X)}</th>`
                      : html`<td data-label=${column.label}>${column.cell(item, extra as X)}</td>`,
                  )}
                  <td class="row-actions">
                    ${
                      canEdit(item) && spec.update
                        ? html`<button type="button" class="secondary"
                            aria-label=${`Edit ${spec.label(item)}`}
                            onClick=${() => {
                              setCreated(undefined);
                              setEditing({ mode: 'edit', item });
                            }}>Edit</button>`
                        : null
                    }
                    ${spec.actions?.(item, row)}
                    ${
                      canRemove(item)
                        ? html`<button type="button" class="danger"
                            aria-label=${`${spec.removeLabel ?? 'Delete'} ${spec.label(item)}`}
                            onClick=${() => setDeleting(item)}>${spec.removeLabel ?? 'Delete'}</button>`
                        : null
                    }
                    ${
                      spec.details
                        ? html`<${Disclosure} label=${spec.details.label} of=${spec.label(item)}>
                            ${() => spec.details?.render(item, row)}
                          <//>`
                        : null
                    }
                  </td>
                </tr>`,
              )}</tbody>
            </table>`
    }
    ${
      deleting !== undefined
        ? html`<${ConfirmDialog} title=${`${spec.removeLabel ?? 'Delete'} ${spec.noun}?`}
            message=${`${spec.removeLabel ?? 'Delete'} ${spec.label(deleting)}? This cannot be undone.`}
            confirmLabel=${spec.removeLabel ?? 'Delete'}
            onConfirm=${() => remove(deleting)} onCancel=${() => setDeleting(undefined)} />`
        : null
    }
  </section>`;
}

/**
 * A `<details>` whose content is made when it opens, each time anew (what it shows, such as where
 * an item is used, is looked up then, not for every row when the list loads).
 */
function Disclosure(props: { label: string; of: string; children: () => unknown }) {
  const [opened, setOpened] = useState(0);
  return html`<details onToggle=${(event: Event) => {
    if ((event.currentTarget as HTMLDetailsElement).open) setOpened((count) => count + 1);
  }}>
    <summary>${props.label}<span class="sr-only"> of ${props.of}</span></summary>
    ${opened > 0 ? html`<div key=${opened}>${props.children()}</div>` : null}
  </details>`;
}

/** Where an item is used, looked up when its details open: "Not used" or the list. */
export function Usage(props: {
  /** What is looked up (the lookup runs again when it changes). */
  of: string;
  load: () => Promise<readonly string[]>;
  what: string;
}) {
  const [uses, setUses] = useState<readonly string[]>();
  const [error, setError] = useState<string>();
  const latest = useRef(props.load);
  latest.current = props.load;
  useEffect(() => {
    latest.current().then(setUses, (failure: unknown) => setError(messageOf(failure)));
  }, [props.of]);
  if (error) return html`<p class="muted">Where it is used is not available: ${error}</p>`;
  if (uses === undefined) return html`<p class="muted">Looking up where it is used…</p>`;
  if (uses.length === 0) return html`<p class="muted">Not used by any ${props.what}.</p>`;
  return html`<ul class="uses">${uses.map((use) => html`<li>${use}</li>`)}</ul>`;
}
