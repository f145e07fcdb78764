import type { Predicate } from '../operators/operator.js';
import { ALWAYS } from '../strategies/strategy.js';
import type { EngineWarning } from '../types.js';
import { flagReporter } from '../warnings.js';
import { allOf, compileConstraints } from './constraint.js';

/** Segments are compiled once per snapshot and shared by every strategy that references them. */
export function compileSegments(
  raw: unknown,
  onWarning: ((warning: EngineWarning) => void) | undefined,
): Map<number, Predicate> {
  const segments = new Map<number, Predicate>();
  if (raw === undefined || raw === null) return segments;
  const reporter = flagReporter(undefined, onWarning);
  if (!Array.isArray(raw)) {
    reporter.warn('"segments" is not a list');
    return segments;
  }
  for (const segment of raw) {
    const id = (segment as { id?: unknown } | null)?.id;
    if (typeof id !== 'number') {
      reporter.warn('segment without a numeric "id"');
      continue;
    }
    const where = `segment ${id}`;
    const constraints = (segment as { constraints?: unknown }).constraints;
    segments.set(id, allOf(compileConstraints(constraints, reporter, where), ALWAYS));
  }
  return segments;
}
