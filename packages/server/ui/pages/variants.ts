import { html } from '../kit.js';
import type { Variant } from '../types.js';

/** Weights are per mille (1000 = 100 %), as Unleash stores them. */
const TOTAL = 1000;

/**
 * The weights the server will give: fixed weights stay, the rest is shared evenly by the
 * variable variants (the remainder to the first ones).
 */
export function balanced(variants: readonly Variant[]): number[] {
  const fixed = variants.reduce(
    (sum, variant) => sum + (variant.weightType === 'fix' ? variant.weight : 0),
    0,
  );
  const variable = variants.filter((variant) => variant.weightType !== 'fix').length;
  const share = variable === 0 ? 0 : Math.floor(Math.max(0, TOTAL - fixed) / variable);
  let remainder = variable === 0 ? 0 : Math.max(0, TOTAL - fixed) - share * variable;
  return variants.map((variant) => {
    if (variant.weightType === 'fix') return variant.weight;
    const extra = remainder > 0 ? 1 : 0;
    remainder -= extra;
    return share + extra;
  });
}

const percent = (weight: number) => `${(weight / 10).toFixed(1)} %`;

/** Variants with names, fixed or balanced weights, stickiness and payloads. */
export function VariantsEditor(props: {
  idPrefix: string;
  legend: string;
  variants: Variant[];
  stickinessOptions: string[];
  onChange: (variants: Variant[]) => void;
}) {
  const { variants } = props;
  const weights = balanced(variants);
  const update = (index: number, change: Partial<Variant>) =>
    props.onChange(
      variants.map((variant, at) => (at === index ? { ...variant, ...change } : variant)),
    );
  const fixedTotal = variants.reduce((sum, v) => sum + (v.weightType === 'fix' ? v.weight : 0), 0);
  return html`<fieldset class="variants">
    <legend>${props.legend}</legend>
    ${variants.length === 0 ? html`<p class="muted">No variants.</p>` : null}
    ${variants.map((variant, index) => {
      const id = `${props.idPrefix}-v${index}`;
      return html`<div class="variant" key=${index}>
        <label>Name <input id=${`${id}-name`} required value=${variant.name}
          onChange=${(event: Event) => update(index, { name: (event.currentTarget as HTMLInputElement).value.trim() })} /></label>
        <label class="inline"><input type="checkbox" checked=${variant.weightType === 'fix'}
          onChange=${(event: Event) =>
            update(index, {
              weightType: (event.currentTarget as HTMLInputElement).checked ? 'fix' : 'variable',
            })} /> Fixed weight</label>
        ${
          variant.weightType === 'fix'
            ? html`<label>Weight (%) <input id=${`${id}-weight`} type="number" min="0" max="100" step="0.1"
                value=${variant.weight / 10}
                onChange=${(event: Event) =>
                  update(index, {
                    weight: Math.round(
                      Number((event.currentTarget as HTMLInputElement).value) * 10,
                    ),
                  })} /></label>`
            : html`<span class="muted" aria-label=${`Weight of ${variant.name || 'this variant'}`}>${percent(weights[index] ?? 0)} (balanced)</span>`
        }
        <label>Stickiness
          <select value=${variant.stickiness ?? 'default'}
            onChange=${(event: Event) => update(index, { stickiness: (event.currentTarget as HTMLSelectElement).value })}>
            ${props.stickinessOptions.map((option) => html`<option>${option}</option>`)}
          </select>
        </label>
        <label>Payload
          <select id=${`${id}-payload-type`} value=${variant.payload?.type ?? ''}
            onChange=${(event: Event) => {
              const type = (event.currentTarget as HTMLSelectElement).value;
              const next = { ...variant };
              if (type) next.payload = { type, value: variant.payload?.value ?? '' };
              else delete next.payload;
              props.onChange(variants.map((entry, at) => (at === index ? next : entry)));
            }}>
            <option value="">none</option><option>string</option><option>json</option>
            <option>csv</option><option>number</option>
          </select>
        </label>
        ${
          variant.payload
            ? html`<label class="grow">Payload value <textarea id=${`${id}-payload`} rows="1"
                onChange=${(event: Event) =>
                  update(index, {
                    payload: {
                      type: variant.payload!.type,
                      value: (event.currentTarget as HTMLTextAreaElement).value,
                    },
                  })}>${variant.payload.value}</textarea></label>`
            : null
        }
        <button type="button" class="secondary" onClick=${() => props.onChange(variants.filter((_, at) => at !== index))}
          aria-label=${`Remove variant ${variant.name || index + 1}`}>Remove</button>
      </div>`;
    })}
    ${fixedTotal > TOTAL ? html`<p class="notice error" role="alert">Fixed weights add up to more than 100 %.</p>` : null}
    <button type="button" class="secondary"
      onClick=${() =>
        props.onChange([
          ...variants,
          { name: '', weight: 0, weightType: 'variable', stickiness: 'default' },
        ])}>Add variant</button>
  </fieldset>`;
}
