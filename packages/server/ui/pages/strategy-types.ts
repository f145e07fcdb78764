/**
 * Strategy types: the built-in ones (read-only) and custom strategy definitions, which name the
 * parameters a flag's strategy of that type is given; an SDK implements what they mean.
 */
import { api, enc, get } from '../api.js';
import { html } from '../kit.js';
import {
  type FieldProps,
  optional,
  ResourcePage,
  type ResourceSpec,
  type Values,
} from '../resource-page.js';

interface Parameter {
  name: string;
  type: string;
  description?: string;
  required?: boolean;
}

interface StrategyType {
  name: string;
  title: string | null;
  description: string | null;
  parameters: Parameter[];
  editable: boolean;
  deprecated: boolean;
}

const PARAMETER_TYPES = ['string', 'percentage', 'list', 'number', 'boolean'];

/** The parameters of a definition, one row each. */
function ParametersEditor(props: { field: FieldProps }) {
  const { field } = props;
  const parameters = (field.value ?? []) as Parameter[];
  const change = (index: number, patch: Partial<Parameter>) =>
    field.set(
      parameters.map((parameter, at) => (at === index ? { ...parameter, ...patch } : parameter)),
    );
  return html`<fieldset id=${field.id}>
    <legend>Parameters</legend>
    ${parameters.length === 0 ? html`<p class="muted">None.</p>` : null}
    ${parameters.map((parameter, index) => {
      const id = `${field.id}-${index}`;
      return html`<div class="variant" key=${index}>
        <label for=${`${id}-name`}>Name
          <input id=${`${id}-name`} required maxLength="100" value=${parameter.name}
            onInput=${(event: Event) => change(index, { name: (event.currentTarget as HTMLInputElement).value })} />
        </label>
        <label for=${`${id}-type`}>Type
          <select id=${`${id}-type`} value=${parameter.type}
            onChange=${(event: Event) => change(index, { type: (event.currentTarget as HTMLSelectElement).value })}>
            ${PARAMETER_TYPES.map((type) => html`<option value=${type}>${type}</option>`)}
          </select>
        </label>
        <label class="grow" for=${`${id}-description`}>Description
          <input id=${`${id}-description`} maxLength="1000" value=${parameter.description ?? ''}
            onInput=${(event: Event) =>
              change(index, { description: (event.currentTarget as HTMLInputElement).value })} />
        </label>
        <label class="inline"><input type="checkbox" checked=${parameter.required === true}
          onChange=${(event: Event) =>
            change(index, {
              required: (event.currentTarget as HTMLInputElement).checked,
            })} /> Required</label>
        <button type="button" class="secondary" aria-label=${`Remove parameter ${index + 1}`}
          onClick=${() => field.set(parameters.filter((_, at) => at !== index))}>Remove</button>
      </div>`;
    })}
    <button type="button" class="secondary"
      onClick=${() => field.set([...parameters, { name: '', type: 'string', description: '', required: false }])}>
      Add parameter</button>
  </fieldset>`;
}

const bodyOf = (values: Values) => ({
  title: optional(values.title) ?? null,
  description: optional(values.description) ?? null,
  parameters: ((values.parameters ?? []) as Parameter[]).map((parameter) => ({
    ...parameter,
    name: parameter.name.trim(),
  })),
});

const spec: ResourceSpec<StrategyType> = {
  id: 'strategy-types',
  title: 'Strategy types',
  noun: 'strategy type',
  intro:
    'The built-in strategies and your custom ones. A custom strategy names its parameters; the SDKs that use it implement it.',
  write: 'edit',
  list: async () => (await get<{ strategies: StrategyType[] }>('/api/admin/strategies')).strategies,
  key: (strategy) => strategy.name,
  label: (strategy) => strategy.name,
  columns: [
    { label: 'Name', cell: (strategy) => strategy.name },
    { label: 'Title', cell: (strategy) => strategy.title ?? '' },
    {
      label: 'Description',
      cell: (strategy) => html`<span class="clip">${strategy.description}</span>`,
    },
    {
      label: 'Parameters',
      cell: (strategy) =>
        strategy.parameters.map((parameter) => `${parameter.name} (${parameter.type})`).join(', '),
    },
    {
      label: 'Kind',
      cell: (strategy) =>
        `${strategy.editable ? 'custom' : 'built-in'}${strategy.deprecated ? ', deprecated' : ''}`,
    },
  ],
  fields: [
    {
      name: 'name',
      label: 'Name',
      required: true,
      maxLength: 100,
      fixed: true,
      hint: 'Letters, digits and - _ . ~; what SDKs look it up by.',
    },
    { name: 'title', label: 'Title', maxLength: 100 },
    { name: 'description', label: 'Description', type: 'textarea', maxLength: 1000 },
    {
      name: 'parameters',
      label: 'Parameters',
      initial: () => [],
      render: (field) => html`<${ParametersEditor} field=${field} />`,
    },
  ],
  create: (values) =>
    api('POST', '/api/admin/strategies', {
      name: String(values.name ?? '').trim(),
      ...bodyOf(values),
    }),
  update: (strategy, values) =>
    api('PUT', `/api/admin/strategies/${enc(strategy.name)}`, bodyOf(values)),
  remove: (strategy) => api('DELETE', `/api/admin/strategies/${enc(strategy.name)}`),
  editable: (strategy) => strategy.editable,
  actions: (strategy, row) =>
    row.writable && strategy.editable
      ? html`<button type="button" class="secondary"
          aria-label=${`${strategy.deprecated ? 'Reactivate' : 'Deprecate'} ${strategy.name}`}
          onClick=${() =>
            row.change(() =>
              api(
                'POST',
                `/api/admin/strategies/${enc(strategy.name)}/${strategy.deprecated ? 'reactivate' : 'deprecate'}`,
              ),
            )}>${strategy.deprecated ? 'Reactivate' : 'Deprecate'}</button>`
      : null,
};

export function StrategyTypesPage() {
  return html`<${ResourcePage} spec=${spec} />`;
}
