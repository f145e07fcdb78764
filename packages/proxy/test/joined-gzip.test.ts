import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { compile } from '@flags/engine';
import type { ClientFeatures } from '@flags/schemas';
import { AnswerWriter, CompiledState } from '@flags/serving';
import { JoinedGzip } from '../src/http/joined-gzip.js';
import { realisticContexts, realisticPayload } from './fixtures/realistic.js';

/** Gzip answers joined from pieces: each must decode, CRC and size checked, to the body written. */

function stateOf(payload: ClientFeatures): CompiledState {
  return new CompiledState(compile(payload), Date.now());
}

/** Renders `context` and joins its gzip; the body is copied before the writer writes again. */
function joined(
  writer: AnswerWriter,
  gzip: JoinedGzip,
  compiled: CompiledState,
  context: object,
  nameOrder: boolean,
): { body: Buffer; encoded: Buffer | undefined } {
  const rendered = writer.renderEvaluations(compiled, context, false, undefined, nameOrder);
  const body = Buffer.from(rendered.body);
  const written = writer.fragmentsOf(rendered.render);
  assert.ok(written, 'the latest render has its fragments');
  return { body, encoded: gzip.encode(written, body) };
}

describe('JoinedGzip', () => {
  it('joins answers that decode byte for byte, in flag order and in name order', () => {
    const compiled = stateOf(realisticPayload(200));
    const writer = new AnswerWriter();
    const gzip = new JoinedGzip();
    let bodyBytes = 0;
    let encodedBytes = 0;
    for (const [i, context] of realisticContexts(400).entries()) {
      for (const nameOrder of [false, true]) {
        const { body, encoded } = joined(writer, gzip, compiled, context, nameOrder);
        assert.ok(encoded, `context ${i}`);
        // gunzip checks the CRC-32 and the size in the trailer as well as the blocks.
        assert.ok(gunzipSync(encoded).equals(body), `context ${i}, name order ${nameOrder}`);
        bodyBytes += body.length;
        encodedBytes += encoded.length;
      }
    }
    assert.ok(encodedBytes * 3 < bodyBytes, `${encodedBytes} of ${bodyBytes}`);
  });

  it('keeps each piece once: the same answers again add none', () => {
    const compiled = stateOf(realisticPayload(200));
    const writer = new AnswerWriter();
    const gzip = new JoinedGzip();
    const contexts = realisticContexts(50);
    const first = contexts.map((context) => joined(writer, gzip, compiled, context, false).encoded);
    const kept = gzip.keptBytes(compiled);
    assert.ok(kept > 0);
    const again = contexts.map((context) => joined(writer, gzip, compiled, context, false).encoded);
    assert.equal(gzip.keptBytes(compiled), kept);
    assert.deepEqual(again, first);
    // Another snapshot has pieces of its own.
    const other = stateOf(realisticPayload(200));
    assert.equal(gzip.keptBytes(other), 0);
  });

  it('declines an answer whose new pieces would pass the budget, and joins those it holds', () => {
    const compiled = stateOf(realisticPayload(200));
    const writer = new AnswerWriter();
    const gzip = new JoinedGzip(2_000);
    const results = realisticContexts(20).map((context) =>
      joined(writer, gzip, compiled, context, false),
    );
    assert.ok(results.some(({ encoded }) => encoded === undefined));
    assert.ok(gzip.keptBytes(compiled) <= 2_000);
    for (const { body, encoded } of results)
      if (encoded !== undefined) assert.ok(gunzipSync(encoded).equals(body));
  });

  it('joins an empty list, multi-byte names and fragments longer than the deflate window', () => {
    // Each answer larger than the 32 KB deflate window.
    const big = 'x'.repeat(40_000);
    const withBigVariant = (name: string) => ({
      name,
      enabled: true,
      strategies: [{ name: 'default', parameters: {} }],
      variants: [
        {
          name: 'big',
          weight: 1000,
          stickiness: 'default',
          payload: { type: 'string', value: big },
        },
      ],
    });
    const payload: ClientFeatures = {
      version: 2,
      features: [
        { name: 'off', enabled: false, strategies: [] },
        withBigVariant('große-änderung-🚀'),
        withBigVariant('next'),
      ],
    };
    const compiled = stateOf(payload);
    const writer = new AnswerWriter();
    const gzip = new JoinedGzip();
    for (const nameOrder of [false, true]) {
      const { body, encoded } = joined(writer, gzip, compiled, {}, nameOrder);
      assert.ok(body.length > 80_000);
      assert.ok(encoded && gunzipSync(encoded).equals(body));
    }
    const empty = stateOf({
      version: 2,
      features: [{ name: 'off', enabled: false, strategies: [] }],
    });
    const { body, encoded } = joined(writer, gzip, empty, {}, false);
    assert.equal(body.toString(), '{"toggles":[]}');
    assert.ok(encoded && gunzipSync(encoded).equals(body));
  });

  it("hands out only the writer's latest render", () => {
    const compiled = stateOf(realisticPayload(20));
    const writer = new AnswerWriter();
    const [one, two] = realisticContexts(2);
    const first = writer.renderEvaluations(compiled, one as object, false, undefined);
    assert.ok(writer.fragmentsOf(first.render));
    const second = writer.renderEvaluations(compiled, two as object, false, undefined);
    assert.equal(writer.fragmentsOf(first.render), undefined);
    assert.ok(writer.fragmentsOf(second.render));
    assert.equal(writer.fragmentsOf(undefined), undefined);
  });
});
