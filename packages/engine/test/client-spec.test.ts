// Runs every toggle test and variant test of every file of the pinned @unleash/client-specification,
// read from node_modules (not copied): one describe per file, one it per case.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { ClientFeatures } from '@flags/schemas';
import {
  applyDelta,
  type Context,
  compile,
  type DeltaEvent,
  type Evaluation,
  type Snapshot,
} from '../src/index.js';

interface SpecCase {
  readonly description: string;
  readonly context: Record<string, unknown>;
  readonly toggleName: string;
  readonly expectedResult: unknown;
}

interface SpecFile {
  readonly name: string;
  readonly state: ClientFeatures | { readonly events: readonly DeltaEvent[] };
  readonly tests?: readonly SpecCase[];
  readonly variantTests?: readonly SpecCase[];
}

const require = createRequire(import.meta.url);
const root = join(
  dirname(require.resolve('@unleash/client-specification/package.json')),
  'specifications',
);
const read = (file: string): unknown => JSON.parse(readFileSync(join(root, file), 'utf8'));
const files = read('index.json') as string[];

/** The spec's contexts are wire JSON: `currentTime` is a string, properties may hold null. */
function toContext(raw: Record<string, unknown>): Context {
  const { currentTime, properties, ...rest } = raw;
  return {
    ...(rest as Context),
    ...(typeof currentTime === 'string' ? { currentTime: new Date(currentTime) } : {}),
    ...(properties ? { properties: properties as Record<string, string | undefined> } : {}),
  };
}

/** Files 19 and 20 describe the state as delta events: hydrate/apply them first. */
function payloadOf(spec: SpecFile): ClientFeatures {
  const state = spec.state as { events?: readonly DeltaEvent[] };
  return state.events ? applyDelta(undefined, state.events) : (spec.state as ClientFeatures);
}

/**
 * The flag's answer through `evaluateEach` with the memo on (`memoBytes`), three times over, so
 * that the third comes from the memo wherever the flag is kept: all three must agree.
 */
function throughMemo(snapshot: Snapshot, name: string, context: Context): Evaluation | undefined {
  const index = snapshot.names.indexOf(name);
  const answers = [0, 1, 2].map(() => {
    let found: Evaluation | undefined;
    snapshot.evaluateEach(context, {
      visit: (i, result) => {
        if (i === index) found = result;
      },
    });
    return found;
  });
  assert.equal(answers[1]?.enabled, answers[0]?.enabled);
  assert.equal(answers[2]?.enabled, answers[0]?.enabled);
  return answers[2];
}

let toggleTests = 0;
let variantTests = 0;

for (const file of files) {
  const spec = read(file) as SpecFile;
  describe(spec.name, () => {
    // Random stickiness cases (file 05) must hold for any draw, so use the real source.
    const snapshot = compile(payloadOf(spec));
    const memo = compile(payloadOf(spec), { memoBytes: 1 << 20 });
    for (const test of spec.tests ?? []) {
      toggleTests++;
      it(test.description, () => {
        const result = snapshot.evaluate(test.toggleName, toContext(test.context));
        assert.equal(result?.enabled ?? false, test.expectedResult);
        const kept = throughMemo(memo, test.toggleName, toContext(test.context));
        assert.equal(kept?.enabled ?? false, test.expectedResult);
      });
    }
    for (const test of spec.variantTests ?? []) {
      variantTests++;
      it(`variant: ${test.description}`, () => {
        const expected = test.expectedResult as { feature_enabled: boolean };
        const result = snapshot.evaluate(test.toggleName, toContext(test.context));
        // The spec lists `feature_enabled`; the engine also carries its camel-case twin.
        const variant = result?.variant ?? {
          name: 'disabled',
          enabled: false,
          feature_enabled: false,
          featureEnabled: false,
        };
        assert.deepEqual(variant, { ...expected, featureEnabled: expected.feature_enabled });
      });
    }
  });
}

after(() => {
  console.log(
    `client specification: ${toggleTests} toggle tests, ${variantTests} variant tests, ${files.length} files`,
  );
});
