import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Ajv } from 'ajv';
import TypeBox, { type TSchema } from 'typebox';
import { configSchema, option, Type } from '../src/index.js';

/** A schema as ajv and the docs see it: its JSON (TypeBox's own marks are not enumerable). */
const json = (schema: unknown): unknown => JSON.parse(JSON.stringify(schema));

/** Every builder, each way the option schemas call it, built by `build` (ours or TypeBox's). */
function samples(build: typeof Type): TSchema[] {
  return [
    build.String(),
    build.String({ minLength: 1, format: 'uri', default: 'x' }),
    build.Integer({ minimum: 0, maximum: 65535, default: 4242 }),
    build.Boolean({ default: false }),
    build.Array(build.String()),
    build.Array(build.Integer({ minimum: 1 }), { default: [], maxItems: 3 }),
    build.Enum(['auto', 'polling'], { default: 'auto' }),
    build.Union([build.Boolean(), build.Integer({ minimum: 0 })], { default: false }),
    build.Unsafe<string>({ type: 'string', format: 'url', title: 'a URL' }),
    build.Unsafe({}),
    build.Object({ name: build.String({ minLength: 1 }), value: build.String() }),
    build.Object(
      { a: build.Optional(build.Integer()), b: build.String(), c: build.Optional(build.String()) },
      { default: {}, title: 'nested' },
    ),
    build.Object({ only: build.Optional(build.Boolean()) }),
    build.Optional(build.String({ minLength: 2 })),
  ];
}

describe('the schema builders', () => {
  it('build the JSON Schema TypeBox builds', () => {
    const ours = samples(Type);
    const theirs = samples(TypeBox as unknown as typeof Type);
    assert.equal(ours.length, theirs.length);
    for (let i = 0; i < ours.length; i++) assert.deepEqual(json(ours[i]), json(theirs[i]), `#${i}`);
  });

  it('copy what they are given, so that nothing shared changes', () => {
    const given = Type.String({ minLength: 1 });
    const optional = Type.Optional(given);
    assert.notEqual(optional, given);
    const object = Type.Object({ kept: optional, required: given });
    assert.deepEqual(object.required, ['required']);
    const unsafe = { type: 'string' };
    assert.notEqual(Type.Unsafe(unsafe), unsafe);
  });

  it('validate as TypeBox`s do, in an option schema with defaults', () => {
    const build = (builders: typeof Type) =>
      builders.Object({
        port: option(builders.Integer({ minimum: 0, maximum: 65535 }), {
          env: ['PORT'],
          default: 4242,
          doc: 'port',
        }),
        mode: option(builders.Enum(['auto', 'polling']), { env: ['MODE'], doc: 'mode' }),
        names: option(builders.Array(builders.String({ minLength: 1 })), {
          env: ['NAMES'],
          default: [],
          doc: 'names',
        }),
      });
    const ours = configSchema(build(Type));
    const theirs = configSchema(build(TypeBox as unknown as typeof Type));
    for (const env of [{}, { PORT: '80', MODE: 'polling', NAMES: 'a,b' }]) {
      assert.deepEqual(ours.load(env), theirs.load(env));
    }
    for (const env of [{ PORT: '-1' }, { PORT: 'x' }, { MODE: 'push' }]) {
      assert.throws(() => ours.load(env), /invalid configuration/);
      assert.throws(() => theirs.load(env), /invalid configuration/);
    }
    // The compiled schema is the same too.
    assert.deepEqual(json(build(Type)), json(build(TypeBox as unknown as typeof Type)));
    new Ajv().compile(json(build(Type)) as object);
  });
});
