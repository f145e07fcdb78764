import { useState } from 'preact/hooks';
import { html, messageOf, Notice } from '../kit.js';
import type { Constraint, ContextField, Segment, Strategy, Variant } from '../types.js';
import { ConstraintsEditor } from './constraints.js';
import { VariantsEditor } from './variants.js';

/** A strategy type of `GET /api/admin/strategies`. */
export interface StrategyType {
  name: string;
  displayName?: string | null;
  description?: string | null;
  parameters: { name: string; type: string; description?: string; required?: boolean }[];
}

export type StrategyDraft = Omit<Strategy, 'id'> & { id?: string };

export const newRollout = (flagName: string): StrategyDraft => ({
  name: 'flexibleRollout',
  title: '',
  disabled: false,
  constraints: [],
  parameters: { rollout: '100', stickiness: 'default', groupId: flagName },
  variants: [],
  segments: [],
});

/** Adding or editing a strategy: type, rollout, parameters, constraints, segments, variants. */
export function StrategyForm(props: {
  idPrefix: string;
  initial: StrategyDraft;
  types: StrategyType[];
  fields: ContextField[];
  segments: Segment[];
  stickinessOptions: string[];
  onSave: (draft: StrategyDraft) => Promise<void>;
  onCancel: () => void;
}) {
  const [draft, setDraft] = useState<StrategyDraft>(props.initial);
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const id = props.idPrefix;
  const type = props.types.find((entry) => entry.name === draft.name);
  const set = (change: Partial<StrategyDraft>) => setDraft({ ...draft, ...change });
  const setParameter = (name: string, value: string) =>
    set({ parameters: { ...draft.parameters, [name]: value } });

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await props.onSave(draft);
    } catch (failure) {
      setError(messageOf(failure));
    } finally {
      setBusy(false);
    }
  };

  const rollout = draft.name === 'flexibleRollout';
  return html`<form class="strategy-form card" onSubmit=${submit} aria-label=${draft.id ? 'Edit strategy' : 'Add strategy'}>
    <div class="row">
      <label>Strategy
        <select id=${`${id}-type`} value=${draft.name} disabled=${draft.id !== undefined}
          onChange=${(event: Event) => {
            const name = (event.currentTarget as HTMLSelectElement).value;
            set({
              name,
              parameters: name === 'flexibleRollout' ? newRollout('').parameters : {},
            });
          }}>
          ${props.types.map((entry) => html`<option value=${entry.name}>${entry.displayName || entry.name}</option>`)}
        </select>
      </label>
      <label class="grow">Title <input id=${`${id}-title`} value=${draft.title ?? ''}
        onChange=${(event: Event) => set({ title: (event.currentTarget as HTMLInputElement).value })} /></label>
      <label class="inline"><input type="checkbox" checked=${Boolean(draft.disabled)}
        onChange=${(event: Event) => set({ disabled: (event.currentTarget as HTMLInputElement).checked })} /> Paused</label>
    </div>
    ${
      rollout
        ? html`<div class="row">
            <label>Rollout (%)
              <input id=${`${id}-rollout`} type="number" min="0" max="100" step="1" required
                value=${draft.parameters.rollout ?? '100'}
                onInput=${(event: Event) => setParameter('rollout', (event.currentTarget as HTMLInputElement).value)} />
            </label>
            <input type="range" min="0" max="100" step="1" aria-label="Rollout slider"
              value=${draft.parameters.rollout ?? '100'}
              onInput=${(event: Event) => setParameter('rollout', (event.currentTarget as HTMLInputElement).value)} />
            <label>Stickiness
              <select id=${`${id}-stickiness`} value=${draft.parameters.stickiness ?? 'default'}
                onChange=${(event: Event) => setParameter('stickiness', (event.currentTarget as HTMLSelectElement).value)}>
                ${props.stickinessOptions.map((option) => html`<option>${option}</option>`)}
              </select>
            </label>
            <label>Group id <input id=${`${id}-group`} value=${draft.parameters.groupId ?? ''}
              onChange=${(event: Event) => setParameter('groupId', (event.currentTarget as HTMLInputElement).value)} /></label>
          </div>`
        : html`<div class="row">${(type?.parameters ?? []).map(
            (
              parameter,
            ) => html`<label class="grow">${parameter.name}${parameter.required ? ' *' : ''}
              ${
                parameter.type === 'boolean'
                  ? html`<input type="checkbox" checked=${draft.parameters[parameter.name] === 'true'}
                      onChange=${(event: Event) =>
                        setParameter(
                          parameter.name,
                          String((event.currentTarget as HTMLInputElement).checked),
                        )} />`
                  : html`<input value=${draft.parameters[parameter.name] ?? ''}
                      type=${parameter.type === 'percentage' || parameter.type === 'number' ? 'number' : 'text'}
                      required=${parameter.required}
                      onChange=${(event: Event) =>
                        setParameter(
                          parameter.name,
                          (event.currentTarget as HTMLInputElement).value,
                        )} />`
              }
              ${parameter.description ? html`<small class="muted">${parameter.description}</small>` : null}
            </label>`,
          )}</div>`
    }
    <${ConstraintsEditor} idPrefix=${id} constraints=${draft.constraints} fields=${props.fields}
      onChange=${(constraints: Constraint[]) => set({ constraints })} />
    <fieldset class="segments">
      <legend>Segments</legend>
      ${props.segments.length === 0 ? html`<p class="muted">No segments exist.</p>` : null}
      ${props.segments.map(
        (segment) => html`<label class="inline"><input type="checkbox"
          checked=${draft.segments?.includes(segment.id)}
          onChange=${(event: Event) => {
            const on = (event.currentTarget as HTMLInputElement).checked;
            const chosen = new Set(draft.segments ?? []);
            if (on) chosen.add(segment.id);
            else chosen.delete(segment.id);
            set({ segments: [...chosen] });
          }} /> ${segment.name}</label>`,
      )}
    </fieldset>
    <${VariantsEditor} idPrefix=${id} legend="Strategy variants" variants=${draft.variants ?? []}
      stickinessOptions=${props.stickinessOptions}
      onChange=${(variants: Variant[]) => set({ variants })} />
    <${Notice} error=${error} />
    <div class="actions">
      <button type="button" class="secondary" onClick=${props.onCancel}>Cancel</button>
      <button type="submit" disabled=${busy}>Save strategy</button>
    </div>
  </form>`;
}
