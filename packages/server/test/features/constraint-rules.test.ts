import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Database } from '../../src/db/database.js';
import {
  type ConstraintInput,
  constraintProblems,
  payloadProblems,
} from '../../src/features/constraint-rules.js';
import { adminContract } from '../admin-contract.js';
import { backends, startApp } from '../helpers.js';

/**
 * The rules of constraints and variant payloads, as unleash-server 8.2 keeps them (each row's
 * answer is the one unleash-server gave to the same constraint): a table of the pure rules, then
 * every route that writes constraints or payloads refusing what breaks them, with nothing changed
 * and the field named in `details`.
 */

const LEGAL = new Map([['region', new Set(['eu', 'us'])]]);

/** [constraint, accepted by unleash-server 8.2] */
const CONSTRAINTS: readonly [ConstraintInput, boolean][] = [
  [{ contextName: 'region', operator: 'IN', values: ['eu'] }, true],
  [{ contextName: 'region', operator: 'IN', values: ['mars'] }, false],
  [{ contextName: 'region', operator: 'NOT_IN', values: ['eu', 'mars'] }, false],
  [{ contextName: 'region', operator: 'STR_CONTAINS', values: ['mars'] }, false],
  [{ contextName: 'region', operator: 'IN', values: ['EU'], caseInsensitive: true }, false],
  [{ contextName: 'region', operator: 'NUM_EQ', value: '5' }, false],
  [{ contextName: 'region', operator: 'REGEX', value: 'eu' }, true],
  [{ contextName: 'region', operator: 'REGEX', value: 'e.*' }, false],
  [{ contextName: 'Region', operator: 'IN', values: ['mars'] }, true],
  [{ contextName: 'userId', operator: 'IN', values: [] }, false],
  [{ contextName: 'userId', operator: 'IN' }, false],
  [{ contextName: 'userId', operator: 'IN', value: 'a' }, false],
  [{ contextName: 'userId', operator: 'IN', values: ['a'], value: 'b' }, true],
  [{ contextName: 'userId', operator: 'IN', values: ['a'], value: '' }, false],
  [{ contextName: 'userId', operator: 'IN', values: [''] }, false],
  [{ contextName: 'userId', operator: 'IN', values: [' '] }, true],
  [{ contextName: 'userId', operator: 'IN', values: ['a', 'a'] }, true],
  [{ contextName: 'userId', operator: 'STR_STARTS_WITH', values: [] }, false],
  [{ contextName: 'userId', operator: 'NUM_EQ', value: '12.5' }, true],
  [{ contextName: 'userId', operator: 'NUM_GT', value: '1e3' }, true],
  [{ contextName: 'userId', operator: 'NUM_GT', value: ' 12 ' }, true],
  [{ contextName: 'userId', operator: 'NUM_LT', value: '-5' }, true],
  [{ contextName: 'userId', operator: 'NUM_LT', value: '.5' }, true],
  [{ contextName: 'userId', operator: 'NUM_LT', value: '5.' }, true],
  [{ contextName: 'userId', operator: 'NUM_EQ', value: 'abc' }, false],
  [{ contextName: 'userId', operator: 'NUM_EQ', value: '0x10' }, false],
  [{ contextName: 'userId', operator: 'NUM_EQ', value: '1_000' }, false],
  [{ contextName: 'userId', operator: 'NUM_EQ', value: 'Infinity' }, false],
  [{ contextName: 'userId', operator: 'NUM_EQ', value: '1e400' }, false],
  [{ contextName: 'userId', operator: 'NUM_EQ', value: '9007199254740993' }, false],
  [{ contextName: 'userId', operator: 'NUM_EQ', value: '  ' }, false],
  [{ contextName: 'userId', operator: 'NUM_EQ', value: '' }, false],
  [{ contextName: 'userId', operator: 'NUM_EQ' }, false],
  [{ contextName: 'userId', operator: 'NUM_EQ', values: ['1'] }, false],
  [{ contextName: 'currentTime', operator: 'DATE_AFTER', value: '2024-01-01' }, true],
  [{ contextName: 'currentTime', operator: 'DATE_AFTER', value: '2024-01-01T00:00:00.000Z' }, true],
  [{ contextName: 'currentTime', operator: 'DATE_AFTER', value: 'Jan 1 2024' }, true],
  [{ contextName: 'currentTime', operator: 'DATE_AFTER', value: '2024-02-30' }, true],
  [{ contextName: 'currentTime', operator: 'DATE_AFTER', value: '0' }, true],
  [{ contextName: 'currentTime', operator: 'DATE_AFTER', value: '12' }, true],
  [{ contextName: 'currentTime', operator: 'DATE_BEFORE', value: 'yesterday' }, false],
  [{ contextName: 'currentTime', operator: 'DATE_BEFORE', value: '2024-13-45' }, false],
  [{ contextName: 'currentTime', operator: 'DATE_BEFORE', value: '2024-01-01T25:00:00Z' }, false],
  [{ contextName: 'currentTime', operator: 'DATE_BEFORE', value: '99999999999999999' }, false],
  [{ contextName: 'currentTime', operator: 'DATE_BEFORE', value: ' ' }, false],
  [{ contextName: 'currentTime', operator: 'DATE_BEFORE' }, false],
  [{ contextName: 'userId', operator: 'SEMVER_EQ', value: '1.2.3' }, true],
  [{ contextName: 'userId', operator: 'SEMVER_EQ', value: '1.2.3-beta.1' }, true],
  [{ contextName: 'userId', operator: 'SEMVER_EQ', value: '1.2.3-0' }, true],
  [{ contextName: 'userId', operator: 'SEMVER_EQ', value: '1.2.3+build' }, true],
  [{ contextName: 'userId', operator: 'SEMVER_EQ', value: '1.2.3-alpha+001' }, true],
  [{ contextName: 'userId', operator: 'SEMVER_GT', value: '1.2' }, false],
  [{ contextName: 'userId', operator: 'SEMVER_GT', value: 'v1.2.3' }, false],
  [{ contextName: 'userId', operator: 'SEMVER_GT', value: '=1.2.3' }, false],
  [{ contextName: 'userId', operator: 'SEMVER_GT', value: '01.2.3' }, false],
  [{ contextName: 'userId', operator: 'SEMVER_GT', value: '1.2.3-beta.01' }, false],
  [{ contextName: 'userId', operator: 'SEMVER_GT', value: '1.2.3 ' }, false],
  [{ contextName: 'userId', operator: 'SEMVER_GT', value: '999999999999999999.0.0' }, false],
  [{ contextName: 'userId', operator: 'SEMVER_LT' }, false],
  [{ contextName: 'userId', operator: 'REGEX', value: 'a.*' }, true],
  [{ contextName: 'userId', operator: 'REGEX', value: '(?i)abc' }, true],
  [{ contextName: 'userId', operator: 'REGEX', value: '\\d+' }, true],
  [{ contextName: 'userId', operator: 'REGEX', value: '[' }, false],
  [{ contextName: 'userId', operator: 'REGEX', value: 'a(?=b)' }, false],
  [{ contextName: 'userId', operator: 'REGEX', values: ['a'] }, false],
  [{ contextName: 'nosuchfield', operator: 'IN', values: ['anything'] }, true],
];

/** [payload, accepted by unleash-server 8.2] */
const PAYLOADS: readonly [{ type: string; value: string }, boolean][] = [
  [{ type: 'json', value: '{"a":1}' }, true],
  [{ type: 'json', value: '[1]' }, true],
  [{ type: 'json', value: ' {} ' }, true],
  [{ type: 'json', value: '{bad' }, false],
  [{ type: 'json', value: '1' }, false],
  [{ type: 'json', value: '"s"' }, false],
  [{ type: 'json', value: 'null' }, false],
  [{ type: 'json', value: '' }, false],
  [{ type: 'csv', value: 'a,b' }, true],
  [{ type: 'csv', value: 'a\n"b' }, true],
  [{ type: 'csv', value: '' }, false],
  [{ type: 'string', value: 'x' }, true],
  [{ type: 'string', value: '' }, false],
  [{ type: 'number', value: '12' }, true],
  [{ type: 'number', value: 'abc' }, true],
  [{ type: 'number', value: '' }, false],
];

describe('constraint and payload rules', () => {
  for (const [constraint, accepted] of CONSTRAINTS) {
    it(`${accepted ? 'takes' : 'refuses'} ${JSON.stringify(constraint)}`, () => {
      const problems = constraintProblems([constraint], LEGAL, 'body/constraints');
      assert.equal(problems.length === 0, accepted, problems.join('; '));
      for (const problem of problems) assert.match(problem, /^body\/constraints\/0\/value/);
    });
  }
  for (const [payload, accepted] of PAYLOADS) {
    it(`${accepted ? 'takes' : 'refuses'} the payload ${JSON.stringify(payload)}`, () => {
      const problems = payloadProblems([{ payload }], 'body/variants');
      assert.equal(problems.length === 0, accepted, problems.join('; '));
      for (const problem of problems) assert.match(problem, /^body\/variants\/0\/payload\/value /);
    });
  }
  it('names every problem, each at its place', () => {
    assert.deepEqual(
      constraintProblems(
        [
          { contextName: 'region', operator: 'IN', values: ['eu', 'mars', 'venus'] },
          { contextName: 'userId', operator: 'NUM_EQ', value: 'x' },
        ],
        LEGAL,
        'body/constraints',
      ),
      [
        'body/constraints/0/values/1 "mars" is not a legal value of context field "region" (eu, us)',
        'body/constraints/0/values/2 "venus" is not a legal value of context field "region" (eu, us)',
        'body/constraints/1/value "x" is not a number',
      ],
    );
  });
});

for (const backend of backends) {
  describe(`constraint and payload rules in every write on ${backend.name}`, () => {
    let db: Database;
    let app: FastifyInstance;
    let cleanup: () => Promise<void>;
    const { call, refused } = adminContract(
      () => app,
      () => db,
    );
    const F = '/api/admin/projects/default/features';
    const strategies = `${F}/rules/environments/development/strategies`;
    const variants = `${F}/rules/environments/development/variants`;
    const mars = { contextName: 'region', operator: 'IN', values: ['mars'] };
    const badVariant = {
      name: 'a',
      weight: 1000,
      weightType: 'variable',
      stickiness: 'default',
      payload: { type: 'json', value: '{bad' },
    };
    let strategyId: string;
    let segmentId: number;

    before(async () => {
      ({ db, cleanup } = await backend.open());
      app = await startApp(db);
      const field = await call('POST', '/api/admin/context', {
        name: 'region',
        legalValues: [{ value: 'eu' }, { value: 'us' }],
      });
      assert.equal(field.statusCode, 201, field.body);
      assert.equal((await call('POST', F, { name: 'rules' })).statusCode, 201);
      const added = await call('POST', strategies, { name: 'default' });
      assert.equal(added.statusCode, 200, added.body);
      strategyId = added.json().id;
      const segment = await call('POST', '/api/admin/segments', {
        name: 'europe',
        constraints: [{ contextName: 'region', operator: 'IN', values: ['eu'] }],
      });
      assert.equal(segment.statusCode, 201, segment.body);
      segmentId = segment.json().id;
    });
    after(async () => {
      await app.close();
      await cleanup();
    });

    const namesField = (
      body: { details: { message: string }[] },
      field: string,
      what = /legal value/,
    ) => {
      assert.ok(
        body.details.some(
          (detail) => detail.message.startsWith(field) && what.test(detail.message),
        ),
        JSON.stringify(body.details),
      );
    };

    it('strategies: add, replace and patch refuse a value outside the legal values', async () => {
      namesField(
        await refused(400, () =>
          call('POST', strategies, { name: 'default', constraints: [mars] }),
        ),
        'body/constraints/0/values/0',
      );
      namesField(
        await refused(400, () =>
          call('PUT', `${strategies}/${strategyId}`, { name: 'default', constraints: [mars] }),
        ),
        'body/constraints/0/values/0',
      );
      namesField(
        await refused(400, () =>
          call('PATCH', `${strategies}/${strategyId}`, [
            {
              op: 'replace',
              path: '/constraints',
              value: [{ contextName: 'userId', operator: 'SEMVER_EQ', value: 'v1' }],
            },
          ]),
        ),
        'body/constraints/0/value',
        /semantic version/,
      );
      const taken = await call('POST', strategies, {
        name: 'default',
        constraints: [{ contextName: 'region', operator: 'IN', values: ['eu'] }],
      });
      assert.equal(taken.statusCode, 200, taken.body);
    });

    it('variants: strategy variants and the environment’s refuse a payload that is not JSON', async () => {
      namesField(
        await refused(400, () =>
          call('POST', strategies, { name: 'flexibleRollout', variants: [badVariant] }),
        ),
        'body/variants/0/payload/value',
        /JSON/,
      );
      namesField(
        await refused(400, () => call('PUT', variants, [badVariant])),
        'body/0/payload/value',
        /JSON/,
      );
      namesField(
        await refused(400, () =>
          call('PATCH', variants, [{ op: 'add', path: '/0', value: badVariant }]),
        ),
        'body/0/payload/value',
        /JSON/,
      );
    });

    it('segments: create and replace refuse what strategies refuse', async () => {
      namesField(
        await refused(400, () =>
          call('POST', '/api/admin/segments', { name: 'mars', constraints: [mars] }),
        ),
        'body/constraints/0/values/0',
      );
      namesField(
        await refused(400, () =>
          call('PUT', `/api/admin/segments/${segmentId}`, {
            name: 'europe',
            constraints: [{ contextName: 'userId', operator: 'IN', values: [] }],
          }),
        ),
        'body/constraints/0/values',
        /at least one/,
      );
    });

    it('imports refuse constraints and payloads that break the rules, naming where', async () => {
      const response = await refused(400, () =>
        call('POST', '/api/admin/features-batch/import', {
          project: 'default',
          environment: 'development',
          data: {
            features: [{ name: 'imported' }],
            featureStrategies: [
              {
                name: 'default',
                featureName: 'imported',
                constraints: [{ contextName: 'appName', operator: 'NUM_EQ', value: 'web' }],
              },
            ],
            featureEnvironments: [
              {
                name: 'imported',
                enabled: true,
                variants: [{ ...badVariant, payload: { type: 'string', value: '' } }],
              },
            ],
            tagTypes: [],
          },
        }),
      );
      const messages = JSON.stringify(response.details);
      assert.match(
        messages,
        /data\/featureStrategies\/0\/constraints\/0\/value \\"web\\" is not a number/,
      );
      assert.match(
        messages,
        /data\/featureEnvironments\/0\/variants\/0\/payload\/value must not be empty/,
      );
    });

    it('context fields refuse a legal value given twice; tag types a one-character name', async () => {
      namesField(
        await refused(400, () =>
          call('POST', '/api/admin/context', {
            name: 'plan',
            legalValues: [{ value: 'pro' }, { value: 'pro', description: 'again' }],
          }),
        ),
        'body/legalValues/1',
        /twice/,
      );
      await refused(400, () =>
        call('PUT', '/api/admin/context/region', {
          legalValues: [{ value: 'eu' }, { value: 'eu' }],
        }),
      );
      await refused(400, () => call('POST', '/api/admin/tag-types', { name: 'a' }));
      assert.equal((await call('POST', '/api/admin/tag-types', { name: 'ab' })).statusCode, 201);
    });
  });
}
