import type { EngineWarning } from '../types.js';
import { flagReporter } from '../warnings.js';
import { type ConstraintEnvironment, compileConstraints } from './constraint.js';

/**
 * Segments are compiled once per snapshot: a segment is the list of its constraints' check ids,
 * appended to the checks of every strategy that references it (as the SDKs do).
 */
export function compileSegments(
  raw: unknown,
  onWarning: ((warning: EngineWarning) => void) | undefined,
  shared: Omit<ConstraintEnvironment, 'reporter'>,
): Map<number, readonly number[]> {
  const segments = new Map<number, readonly number[]>();
  if (raw === undefined || raw === null) return segments;
  const reporter = flagReporter(undefined, onWarning);
  const environment: ConstraintEnvironment = { ...shared, reporter };
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
    const constraints = (segment as { constraints?: unknown }).constraints;
    segments.set(id, compileConstraints(constraints, environment, `segment ${id}`));
  }
  return segments;
}
