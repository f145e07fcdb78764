import type { ConstraintOperator } from '@flags/schemas';
import { html } from '../kit.js';
import type { Constraint, ContextField } from '../types.js';

type ValueKind = 'list' | 'text-list' | 'number' | 'date' | 'semver' | 'pattern';

/**
 * Every constraint operator the server takes (`CONSTRAINT_OPERATORS`: the type makes a missing
 * one a compile error), in the order the editor offers them, by the kind of value it compares.
 */
const OPERATOR_CHOICES: Readonly<Record<ConstraintOperator, { label: string; kind: ValueKind }>> = {
  IN: { label: 'is one of', kind: 'list' },
  NOT_IN: { label: 'is not one of', kind: 'list' },
  STR_CONTAINS: { label: 'contains', kind: 'text-list' },
  STR_STARTS_WITH: { label: 'starts with', kind: 'text-list' },
  STR_ENDS_WITH: { label: 'ends with', kind: 'text-list' },
  REGEX: { label: 'matches (regular expression)', kind: 'pattern' },
  NUM_EQ: { label: '= (number)', kind: 'number' },
  NUM_GT: { label: '> (number)', kind: 'number' },
  NUM_GTE: { label: '≥ (number)', kind: 'number' },
  NUM_LT: { label: '< (number)', kind: 'number' },
  NUM_LTE: { label: '≤ (number)', kind: 'number' },
  DATE_AFTER: { label: 'after (date)', kind: 'date' },
  DATE_BEFORE: { label: 'before (date)', kind: 'date' },
  SEMVER_EQ: { label: '= (version)', kind: 'semver' },
  SEMVER_GT: { label: '> (version)', kind: 'semver' },
  SEMVER_GTE: { label: '≥ (version)', kind: 'semver' },
  SEMVER_LT: { label: '< (version)', kind: 'semver' },
  SEMVER_LTE: { label: '≤ (version)', kind: 'semver' },
};
const OPERATORS = Object.entries(OPERATOR_CHOICES).map(([name, choice]) => ({ name, ...choice }));

const kindOf = (operator: string): ValueKind =>
  OPERATORS.find((entry) => entry.name === operator)?.kind ?? 'list';

/** A readable line for a constraint. */
export function describeConstraint(constraint: Constraint): string {
  const label = OPERATORS.find((entry) => entry.name === constraint.operator)?.label;
  const values = constraint.values?.length
    ? constraint.values.join(', ')
    : (constraint.value ?? '');
  return `${constraint.contextName} ${constraint.inverted ? 'NOT ' : ''}${label ?? constraint.operator} ${values}`;
}

/** Converts between `datetime-local` input values and ISO instants (UTC). */
const toLocalInput = (iso: string | undefined) => {
  if (!iso) return '';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  return new Date(date.getTime() - date.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
};

/** The constraints of a strategy or segment, each with an input that fits its operator. */
export function ConstraintsEditor(props: {
  idPrefix: string;
  constraints: Constraint[];
  fields: ContextField[];
  onChange: (constraints: Constraint[]) => void;
}) {
  const { constraints, fields } = props;
  const update = (index: number, change: Partial<Constraint>) => {
    const next = constraints.map((constraint, at) => {
      if (at !== index) return constraint;
      const merged = { ...constraint, ...change };
      // A new operator of another kind starts from empty values.
      if (change.operator && kindOf(change.operator) !== kindOf(constraint.operator)) {
        const single =
          kindOf(change.operator) !== 'list' && kindOf(change.operator) !== 'text-list';
        return single
          ? { ...merged, values: [], value: '' }
          : { ...merged, values: [], value: undefined };
      }
      return merged;
    });
    props.onChange(next);
  };
  const remove = (index: number) => props.onChange(constraints.filter((_, at) => at !== index));
  const add = () =>
    props.onChange([
      ...constraints,
      { contextName: fields[0]?.name ?? 'userId', operator: 'IN', values: [], inverted: false },
    ]);

  return html`<fieldset class="constraints">
    <legend>Constraints</legend>
    ${constraints.length === 0 ? html`<p class="muted">None: everyone the rollout covers.</p>` : null}
    ${constraints.map((constraint, index) => {
      const id = `${props.idPrefix}-c${index}`;
      const kind = kindOf(constraint.operator);
      const field = fields.find((entry) => entry.name === constraint.contextName);
      const legal = field?.legalValues ?? [];
      let valueInput: unknown;
      if (kind === 'list' && legal.length > 0) {
        valueInput = html`<fieldset class="legal"><legend>Values of ${constraint.contextName}</legend>
          ${legal.map(
            (legalValue) => html`<label class="inline"><input type="checkbox"
              checked=${constraint.values?.includes(legalValue.value)}
              onChange=${(event: Event) => {
                const on = (event.currentTarget as HTMLInputElement).checked;
                const values = new Set(constraint.values ?? []);
                if (on) values.add(legalValue.value);
                else values.delete(legalValue.value);
                update(index, { values: [...values] });
              }} /> ${legalValue.value}</label>`,
          )}</fieldset>`;
      } else if (kind === 'list' || kind === 'text-list') {
        valueInput = html`<label class="grow">Values (comma-separated)
          <input id=${`${id}-values`} value=${(constraint.values ?? []).join(', ')}
            onChange=${(event: Event) =>
              update(index, {
                values: (event.currentTarget as HTMLInputElement).value
                  .split(',')
                  .map((value) => value.trim())
                  .filter((value) => value !== ''),
              })} /></label>`;
      } else if (kind === 'number') {
        valueInput = html`<label>Number <input id=${`${id}-value`} type="number" step="any" required
          value=${constraint.value ?? ''}
          onChange=${(event: Event) => update(index, { value: (event.currentTarget as HTMLInputElement).value })} /></label>`;
      } else if (kind === 'date') {
        valueInput = html`<label>Date and time <input id=${`${id}-value`} type="datetime-local" required
          value=${toLocalInput(constraint.value)}
          onChange=${(event: Event) => {
            const text = (event.currentTarget as HTMLInputElement).value;
            update(index, { value: text ? new Date(text).toISOString() : '' });
          }} /></label>`;
      } else if (kind === 'pattern') {
        valueInput = html`<label class="grow">Regular expression <input id=${`${id}-value`} required
          placeholder="^team-(a|b)$" spellcheck="false"
          value=${constraint.value ?? ''}
          onChange=${(event: Event) => update(index, { value: (event.currentTarget as HTMLInputElement).value })} /></label>`;
      } else {
        valueInput = html`<label>Version <input id=${`${id}-value`} required placeholder="1.2.3"
          pattern="\\d+\\.\\d+\\.\\d+(-[0-9A-Za-z.\\-]+)?"
          value=${constraint.value ?? ''}
          onChange=${(event: Event) => update(index, { value: (event.currentTarget as HTMLInputElement).value })} /></label>`;
      }
      return html`<div class="constraint" key=${index}>
        <label>Context field
          <select id=${`${id}-field`} value=${constraint.contextName}
            onChange=${(event: Event) =>
              update(index, {
                contextName: (event.currentTarget as HTMLSelectElement).value,
                values: [],
              })}>
            ${
              field
                ? null
                : html`<option value=${constraint.contextName}>${constraint.contextName}</option>`
            }
            ${fields.map((entry) => html`<option value=${entry.name}>${entry.name}</option>`)}
          </select>
        </label>
        <label>Operator
          <select id=${`${id}-operator`} value=${constraint.operator}
            onChange=${(event: Event) =>
              update(index, { operator: (event.currentTarget as HTMLSelectElement).value })}>
            ${OPERATORS.map((entry) => html`<option value=${entry.name}>${entry.label}</option>`)}
          </select>
        </label>
        ${valueInput}
        <label class="inline"><input type="checkbox" checked=${constraint.inverted}
          onChange=${(event: Event) => update(index, { inverted: (event.currentTarget as HTMLInputElement).checked })} /> Negate</label>
        ${
          kind === 'text-list' || kind === 'list' || kind === 'pattern'
            ? html`<label class="inline"><input type="checkbox" checked=${constraint.caseInsensitive}
                onChange=${(event: Event) =>
                  update(index, {
                    caseInsensitive: (event.currentTarget as HTMLInputElement).checked,
                  })} /> Ignore case</label>`
            : null
        }
        <button type="button" class="secondary" onClick=${() => remove(index)}
          aria-label=${`Remove constraint ${index + 1}`}>Remove</button>
      </div>`;
    })}
    <button type="button" class="secondary" onClick=${add}>Add constraint</button>
  </fieldset>`;
}
