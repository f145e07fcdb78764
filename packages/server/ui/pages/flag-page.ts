import { useCallback, useContext, useEffect, useState } from 'preact/hooks';
import { api, enc, envPath, flagPath, get } from '../api.js';
import {
  ConfirmDialog,
  html,
  LiveContext,
  messageOf,
  Notice,
  SessionContext,
  Switch,
  useLiveReload,
} from '../kit.js';
import type { ContextField, Flag, FlagEnvironment, Segment, Strategy, Variant } from '../types.js';
import { describeConstraint } from './constraints.js';
import { FLAG_TYPES, useToggle } from './flag-list.js';
import { FlagHistory } from './history.js';
import {
  newRollout,
  type StrategyDraft,
  StrategyForm,
  type StrategyType,
} from './strategy-form.js';
import { VariantsEditor } from './variants.js';

interface Support {
  types: StrategyType[];
  fields: ContextField[];
  segments: Segment[];
  stickiness: string[];
}

const BUILT_IN_STICKINESS = ['default', 'userId', 'sessionId', 'random'];

/** Context fields, segments and strategy types: what the forms offer. */
function useSupport(): [Support, string | undefined] {
  const [support, setSupport] = useState<Support>({
    types: [],
    fields: [],
    segments: [],
    stickiness: BUILT_IN_STICKINESS,
  });
  const [error, setError] = useState<string>();
  useEffect(() => {
    Promise.all([
      get<{ strategies: StrategyType[] }>('/api/admin/strategies'),
      get<ContextField[]>('/api/admin/context'),
      get<{ segments: Segment[] }>('/api/admin/segments'),
    ]).then(
      ([types, fields, segments]) =>
        setSupport({
          types: types.strategies.filter((type) => !(type as { deprecated?: boolean }).deprecated),
          fields,
          segments: segments.segments,
          stickiness: [
            ...BUILT_IN_STICKINESS,
            ...fields
              .filter((field) => field.stickiness && !BUILT_IN_STICKINESS.includes(field.name))
              .map((field) => field.name),
          ],
        }),
      (failure: unknown) => setError(messageOf(failure)),
    );
  }, []);
  return [support, error];
}

function strategyBody(draft: StrategyDraft) {
  return {
    name: draft.name,
    title: draft.title || null,
    disabled: Boolean(draft.disabled),
    constraints: draft.constraints,
    parameters: draft.parameters,
    variants: draft.variants ?? [],
    segments: draft.segments ?? [],
  };
}

function StrategyCard(props: {
  strategy: Strategy;
  segments: Segment[];
  canEdit: boolean;
  first: boolean;
  last: boolean;
  onEdit: () => void;
  onRemove: () => void;
  onMove: (by: -1 | 1) => void;
}) {
  const { strategy } = props;
  const rollout = strategy.name === 'flexibleRollout';
  const label = strategy.title || strategy.name;
  return html`<li class="strategy">
    <div class="strategy-head">
      <strong>${label}</strong>
      ${strategy.disabled ? html`<span class="badge">paused</span>` : null}
      ${
        rollout
          ? html`<span>${strategy.parameters.rollout ?? '100'} % of ${strategy.parameters.stickiness ?? 'default'}
              ${' '}(group ${strategy.parameters.groupId})</span>`
          : html`<span class="muted">${Object.entries(strategy.parameters)
              .map(([key, value]) => `${key}: ${value}`)
              .join(', ')}</span>`
      }
      ${
        props.canEdit
          ? html`<span class="buttons">
              <button type="button" class="secondary" disabled=${props.first} onClick=${() => props.onMove(-1)}
                aria-label=${`Move ${label} up`}>↑</button>
              <button type="button" class="secondary" disabled=${props.last} onClick=${() => props.onMove(1)}
                aria-label=${`Move ${label} down`}>↓</button>
              <button type="button" class="secondary" onClick=${props.onEdit}>Edit</button>
              <button type="button" class="danger" onClick=${props.onRemove}>Remove</button>
            </span>`
          : null
      }
    </div>
    ${
      strategy.constraints.length > 0
        ? html`<ul class="constraint-list">${strategy.constraints.map(
            (constraint) => html`<li>${describeConstraint(constraint)}</li>`,
          )}</ul>`
        : null
    }
    ${
      strategy.segments?.length
        ? html`<p>Segments: ${strategy.segments
            .map((id) => props.segments.find((segment) => segment.id === id)?.name ?? `#${id}`)
            .join(', ')}</p>`
        : null
    }
    ${
      strategy.variants?.length
        ? html`<p>Variants: ${strategy.variants
            .map((variant) => `${variant.name} ${(variant.weight / 10).toFixed(1)} %`)
            .join(', ')}</p>`
        : null
    }
  </li>`;
}

function EnvironmentPanel(props: {
  flag: Flag;
  environment: FlagEnvironment;
  support: Support;
  reload: () => void;
}) {
  const { flag, environment, support } = props;
  const session = useContext(SessionContext);
  const [editing, setEditing] = useState<StrategyDraft>();
  const [variants, setVariants] = useState<Variant[]>();
  const [removing, setRemoving] = useState<Strategy>();
  const [error, setError] = useState<string>();
  const [info, setInfo] = useState<string>();
  const toggle = useToggle(props.reload);
  const base = envPath(flag.project, flag.name, environment.name);
  const idPrefix = `env-${environment.name}`;

  const run = async (action: () => Promise<unknown>, done?: string) => {
    setError(undefined);
    setInfo(undefined);
    try {
      await action();
      setInfo(done);
      props.reload();
    } catch (failure) {
      setError(messageOf(failure));
    }
  };
  const save = async (draft: StrategyDraft) => {
    if (draft.id) await api('PUT', `${base}/strategies/${enc(draft.id)}`, strategyBody(draft));
    else await api('POST', `${base}/strategies`, strategyBody(draft));
    setEditing(undefined);
    props.reload();
  };
  const move = (index: number, by: -1 | 1) => {
    const order = [...environment.strategies];
    const [moved] = order.splice(index, 1);
    order.splice(index + by, 0, moved!);
    void run(() =>
      api(
        'POST',
        `${base}/strategies/set-sort-order`,
        order.map((strategy, sortOrder) => ({ id: strategy.id, sortOrder })),
      ),
    );
  };

  return html`<section class="card environment" aria-labelledby=${`${idPrefix}-title`}>
    <div class="title-row">
      <h3 id=${`${idPrefix}-title`}>${environment.name} <span class="muted">(${environment.type})</span></h3>
      <${Switch} checked=${environment.enabled} disabled=${!session.canEdit}
        label=${`${flag.name} in ${environment.name}`}
        onChange=${(on: boolean) =>
          toggle.request(
            { flag: flag as never, environment: environment.name, on },
            environment.type,
          )} />
    </div>
    ${toggle.dialog}
    <${Notice} error=${error ?? toggle.error} info=${info} />
    <h4>Strategies</h4>
    ${
      environment.strategies.length === 0
        ? html`<p class="muted">No strategies: when on, the flag is on for everyone.</p>`
        : null
    }
    <ol class="strategies">
      ${environment.strategies.map(
        (strategy, index) => html`<${StrategyCard} key=${strategy.id} strategy=${strategy}
          segments=${support.segments} canEdit=${session.canEdit}
          first=${index === 0} last=${index === environment.strategies.length - 1}
          onEdit=${() => setEditing({ ...strategy, variants: strategy.variants ?? [] })}
          onRemove=${() => setRemoving(strategy)}
          onMove=${(by: -1 | 1) => move(index, by)} />`,
      )}
    </ol>
    ${
      removing
        ? html`<${ConfirmDialog} title=${`Remove ${removing.title || removing.name}?`}
            message=${`The strategy leaves ${flag.name} in ${environment.name}.`}
            confirmLabel="Remove"
            onCancel=${() => setRemoving(undefined)}
            onConfirm=${() => {
              const id = removing.id;
              setRemoving(undefined);
              void run(() => api('DELETE', `${base}/strategies/${enc(id)}`), 'Strategy removed.');
            }} />`
        : null
    }
    ${
      editing
        ? html`<${StrategyForm} idPrefix=${`${idPrefix}-strategy`} initial=${editing}
            types=${support.types} fields=${support.fields} segments=${support.segments}
            stickinessOptions=${support.stickiness}
            onSave=${save} onCancel=${() => setEditing(undefined)} />`
        : session.canEdit
          ? html`<button type="button" onClick=${() => setEditing(newRollout(flag.name))}>
              Add strategy in ${environment.name}</button>`
          : null
    }
    <h4>Variants</h4>
    ${
      variants
        ? html`<form onSubmit=${(event: Event) => {
            event.preventDefault();
            void run(async () => {
              await api('PUT', `${base}/variants`, variants);
              setVariants(undefined);
            }, 'Variants saved.');
          }}>
            <${VariantsEditor} idPrefix=${`${idPrefix}-variants`} legend=${`Variants in ${environment.name}`}
              variants=${variants} stickinessOptions=${support.stickiness} onChange=${setVariants} />
            <div class="actions">
              <button type="button" class="secondary" onClick=${() => setVariants(undefined)}>Cancel</button>
              <button type="submit">Save variants</button>
            </div>
          </form>`
        : html`${
            environment.variants.length === 0
              ? html`<p class="muted">No variants.</p>`
              : html`<ul>${environment.variants.map(
                  (variant) => html`<li>${variant.name}: ${(variant.weight / 10).toFixed(1)} %
                    ${variant.weightType === 'fix' ? '(fixed)' : ''}
                    ${variant.payload ? html` <code>${variant.payload.type}: ${variant.payload.value}</code>` : null}</li>`,
                )}</ul>`
          }
          ${
            session.canEdit
              ? html`<button type="button" class="secondary"
                  onClick=${() => setVariants(environment.variants.map((variant) => ({ ...variant })))}>
                  Edit variants in ${environment.name}</button>`
              : null
          }`
    }
  </section>`;
}

function MetadataForm(props: { flag: Flag; reload: () => void }) {
  const { flag } = props;
  const session = useContext(SessionContext);
  const [error, setError] = useState<string>();
  const [info, setInfo] = useState<string>();
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    try {
      await api('PUT', flagPath(flag.project, flag.name), {
        type: String(form.get('type')),
        description: String(form.get('description') ?? '') || null,
        stale: form.get('stale') === 'on',
        impressionData: form.get('impressionData') === 'on',
      });
      setError(undefined);
      setInfo('Saved.');
      props.reload();
    } catch (failure) {
      setError(messageOf(failure));
    }
  };
  const disabled = !session.canEdit;
  return html`<form class="card" onSubmit=${submit} aria-labelledby="meta-title" key=${JSON.stringify(flag)}>
    <h2 id="meta-title">About</h2>
    <div class="row">
      <label>Type
        <select name="type" value=${flag.type} disabled=${disabled}>
          ${FLAG_TYPES.map((type) => html`<option>${type}</option>`)}
        </select>
      </label>
      <label class="grow">Description <input name="description" value=${flag.description ?? ''} disabled=${disabled} /></label>
      <label class="inline"><input type="checkbox" name="stale" checked=${flag.stale} disabled=${disabled} /> Stale</label>
      <label class="inline"><input type="checkbox" name="impressionData" checked=${flag.impressionData} disabled=${disabled} /> Impression data</label>
      ${session.canEdit ? html`<button type="submit">Save</button>` : null}
    </div>
    <${Notice} error=${error} info=${info} />
  </form>`;
}

function TagsAndDependencies(props: { flag: Flag; reload: () => void }) {
  const { flag } = props;
  const session = useContext(SessionContext);
  const [error, setError] = useState<string>();
  const [parents, setParents] = useState<string[]>([]);
  useEffect(() => {
    if (!session.canEdit) return;
    get<string[]>(`${flagPath(flag.project, flag.name)}/dependencies/possible-parents`).then(
      setParents,
      () => setParents([]),
    );
  }, [flag.name, flag.project, session.canEdit]);
  const run = async (action: () => Promise<unknown>) => {
    try {
      await action();
      setError(undefined);
      props.reload();
    } catch (failure) {
      setError(messageOf(failure));
    }
  };
  const addTag = (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const data = new FormData(form);
    void run(async () => {
      await api('POST', `/api/admin/features/${enc(flag.name)}/tags`, {
        type: String(data.get('tagType') || 'simple'),
        value: String(data.get('tagValue') ?? ''),
      });
      form.reset();
    });
  };
  const addDependency = (event: Event) => {
    event.preventDefault();
    const data = new FormData(event.currentTarget as HTMLFormElement);
    void run(() =>
      api('POST', `${flagPath(flag.project, flag.name)}/dependencies`, {
        feature: String(data.get('parent')),
        enabled: data.get('parentEnabled') !== 'off',
      }),
    );
  };
  return html`<section class="card" aria-labelledby="tags-title">
    <h2 id="tags-title">Tags and dependencies</h2>
    <${Notice} error=${error} />
    <p>
      ${flag.tags.length === 0 ? html`<span class="muted">No tags.</span>` : null}
      ${flag.tags.map(
        (tag) => html`<span class="tag">${tag.type}:${tag.value}
          ${
            session.canEdit
              ? html`<button type="button" class="link" aria-label=${`Remove tag ${tag.type}:${tag.value}`}
                  onClick=${() =>
                    run(() =>
                      api(
                        'DELETE',
                        `/api/admin/features/${enc(flag.name)}/tags/${enc(tag.type)}/${enc(tag.value)}`,
                      ),
                    )}>×</button>`
              : null
          }</span> `,
      )}
    </p>
    ${
      session.canEdit
        ? html`<form class="row" onSubmit=${addTag}>
            <label>Tag type <input name="tagType" value="simple" required /></label>
            <label>Tag value <input name="tagValue" required /></label>
            <button type="submit" class="secondary">Add tag</button>
          </form>`
        : null
    }
    <h3>Depends on</h3>
    ${flag.dependencies.length === 0 ? html`<p class="muted">No parent flag.</p>` : null}
    <ul>${flag.dependencies.map(
      (dependency) => html`<li>${dependency.feature} ${dependency.enabled ? 'is on' : 'is off'}
        ${dependency.variants.length ? ` with variant ${dependency.variants.join(' or ')}` : ''}
        ${
          session.canEdit
            ? html` <button type="button" class="secondary"
                onClick=${() => run(() => api('DELETE', `${flagPath(flag.project, flag.name)}/dependencies/${enc(dependency.feature)}`))}>
                Remove dependency</button>`
            : null
        }</li>`,
    )}</ul>
    ${
      session.canEdit && flag.dependencies.length === 0 && parents.length > 0
        ? html`<form class="row" onSubmit=${addDependency}>
            <label>Parent flag <select name="parent">${parents.map((parent) => html`<option>${parent}</option>`)}</select></label>
            <label>Parent must be <select name="parentEnabled"><option value="on">on</option><option value="off">off</option></select></label>
            <button type="submit" class="secondary">Add dependency</button>
          </form>`
        : null
    }
    ${flag.children.length > 0 ? html`<p>Flags that depend on this one: ${flag.children.join(', ')}</p>` : null}
  </section>`;
}

/** One flag: metadata, tags, dependencies, each environment's strategies and variants, history. */
export function FlagPage(props: {
  project: string;
  feature: string;
  navigate: (to: string) => void;
}) {
  const session = useContext(SessionContext);
  const live = useContext(LiveContext);
  const [flag, setFlag] = useState<Flag>();
  const [version, setVersion] = useState(0);
  const [error, setError] = useState<string>();
  const [confirmArchive, setConfirmArchive] = useState(false);
  const [support, supportError] = useSupport();
  const load = useCallback(() => {
    get<Flag>(flagPath(props.project, props.feature)).then(
      (answer) => {
        setFlag(answer);
        setVersion((value) => value + 1);
      },
      (failure: unknown) => setError(messageOf(failure)),
    );
  }, [props.project, props.feature]);
  useEffect(load, [load]);
  useLiveReload(live, load, props.feature);

  if (!flag) {
    return html`<${Notice} error=${error} />${error ? null : html`<p role="status">Loading…</p>`}`;
  }
  const archive = async () => {
    setConfirmArchive(false);
    try {
      await api('DELETE', flagPath(flag.project, flag.name));
      props.navigate('/archive');
    } catch (failure) {
      setError(messageOf(failure));
    }
  };
  return html`<article class="flag-page">
    <div class="title-row">
      <h1>${flag.name} <span class="muted">in ${flag.project}</span></h1>
      ${
        session.canEdit
          ? html`<button type="button" class="danger" onClick=${() => setConfirmArchive(true)}>Archive</button>`
          : null
      }
    </div>
    ${
      confirmArchive
        ? html`<${ConfirmDialog} title=${`Archive ${flag.name}?`}
            message="Archived flags are off for every client; they can be revived from the archive."
            confirmLabel="Archive" onConfirm=${archive} onCancel=${() => setConfirmArchive(false)} />`
        : null
    }
    <${Notice} error=${error ?? supportError} />
    <${MetadataForm} flag=${flag} reload=${load} />
    <${TagsAndDependencies} flag=${flag} reload=${load} />
    <h2>Environments</h2>
    <div class="environments">
      ${flag.environments.map(
        (environment) => html`<${EnvironmentPanel} key=${environment.name} flag=${flag}
          environment=${environment} support=${support} reload=${load} />`,
      )}
    </div>
    <${FlagHistory} feature=${flag.name} version=${version} />
  </article>`;
}
