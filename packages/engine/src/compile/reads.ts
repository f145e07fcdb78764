import { BUILT_IN_STRATEGIES } from '../strategies/index.js';
import { CLOCK_OPERATORS } from './constraint.js';

/**
 * Which context fields a flag's answer can depend on, read off the payload: what `ResultMemo`
 * keys a flag's result by. Only for contexts with a `userId` (within the value limit): then the
 * `default` stickiness of rollouts and variants reads the userId alone.
 *
 * `undefined` ("volatile") for a flag whose answer is not a function of a few fields that recur
 * across a user's requests: one that reads `sessionId` (new with every session by definition),
 * compares a date (the clock, or `currentTime`), draws at random, or runs a custom strategy. The
 * analysis is conservative: anything it does not recognise makes the flag volatile, which only
 * means the flag is evaluated every time, as without the memo.
 */
export type FieldReads = ReadonlySet<string>;

/** Fields whose values are new for (nearly) every request, or that stand for the clock. */
const UNMEMOIZABLE_FIELDS: ReadonlySet<string> = new Set(['sessionId', 'currentTime']);

type Raw = Record<string, unknown>;

function asObject(raw: unknown): Raw | undefined {
  return typeof raw === 'object' && raw !== null && !Array.isArray(raw) ? (raw as Raw) : undefined;
}

/** Collects the fields a flag reads; `volatile` once anything makes it unmemoizable. */
class ReadCollector {
  readonly fields = new Set<string>();
  volatile = false;

  read(field: unknown): void {
    if (typeof field !== 'string' || UNMEMOIZABLE_FIELDS.has(field)) this.volatile = true;
    else this.fields.add(field);
  }

  /** Stickiness of a rollout or a variant split: `default` reads the userId (see above). */
  stickiness(value: unknown): void {
    if (value === undefined || value === null || value === '' || value === 'default') {
      this.read('userId');
    } else if (value === 'random') this.volatile = true;
    else this.read(value);
  }

  constraints(raw: unknown): void {
    if (raw === undefined || raw === null) return;
    if (!Array.isArray(raw)) return; // compiled as a check that never passes
    for (const item of raw) {
      const constraint = asObject(item);
      if (constraint === undefined) continue;
      const { contextName, operator } = constraint;
      if (typeof contextName !== 'string' || typeof operator !== 'string') continue;
      if (CLOCK_OPERATORS.has(operator)) this.volatile = true;
      else this.read(contextName);
    }
  }

  variants(raw: unknown, fallbackStickiness: unknown): void {
    if (!Array.isArray(raw) || raw.length === 0) return;
    for (const item of raw) {
      const overrides = asObject(item)?.overrides;
      if (!Array.isArray(overrides)) continue;
      for (const override of overrides) this.read(asObject(override)?.contextName);
    }
    const first = asObject(raw[0])?.stickiness;
    this.stickiness(typeof first === 'string' && first !== '' ? first : fallbackStickiness);
  }

  strategy(
    raw: unknown,
    segments: ReadonlyMap<unknown, unknown>,
    custom: ReadonlySet<string>,
  ): void {
    const strategy = asObject(raw);
    if (strategy === undefined || strategy.disabled === true) return;
    const { name } = strategy;
    const parameters = asObject(strategy.parameters) ?? {};
    if (typeof name !== 'string' || custom.has(name)) {
      this.volatile = true;
      return;
    }
    switch (name) {
      case 'flexibleRollout':
        this.stickiness(parameters.stickiness);
        break;
      case 'gradualRolloutUserId':
      case 'userWithId':
        this.read('userId');
        break;
      case 'remoteAddress':
        this.read('remoteAddress');
        break;
      case 'default':
      case 'applicationHostname':
        break;
      default:
        // The other built-ins read the sessionId or draw at random (and one added later is not
        // read here); a name that is not a strategy never matches.
        if (BUILT_IN_STRATEGIES.has(name)) this.volatile = true;
    }
    this.constraints(strategy.constraints);
    if (Array.isArray(strategy.segments)) {
      for (const id of strategy.segments) this.constraints(segments.get(id));
    }
    const stickiness = parameters.stickiness;
    this.variants(strategy.variants, typeof stickiness === 'string' ? stickiness : undefined);
  }
}

/** The fields one flag (with its parents) reads, or `undefined` when it is volatile. */
export function flagReads(
  raw: unknown,
  parents: readonly unknown[],
  segments: ReadonlyMap<unknown, unknown>,
  custom: ReadonlySet<string>,
): FieldReads | undefined {
  const collector = new ReadCollector();
  for (const feature of [raw, ...parents]) {
    const flag = asObject(feature);
    if (flag === undefined || !Array.isArray(flag.strategies)) continue;
    for (const strategy of flag.strategies) collector.strategy(strategy, segments, custom);
    collector.variants(flag.variants, undefined);
    if (collector.volatile) return undefined;
  }
  return collector.volatile ? undefined : collector.fields;
}

/** Segment constraints by id, as the raw payload lists them. */
export function rawSegments(payload: unknown): Map<unknown, unknown> {
  const segments = new Map<unknown, unknown>();
  const list = asObject(payload)?.segments;
  if (!Array.isArray(list)) return segments;
  for (const segment of list) {
    const raw = asObject(segment);
    if (raw !== undefined) segments.set(raw.id, raw.constraints);
  }
  return segments;
}
