import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ClientFeatures } from '@flags/schemas';
import { type CustomStrategy, compile, type EngineWarning } from '../src/index.js';

/** The shape of an unleash-client custom strategy file: a name and isEnabled(parameters, context). */
class TenantStrategy implements CustomStrategy {
  readonly name = 'tenant';
  readonly calls: { parameters: Record<string, unknown>; context: Record<string, unknown> }[] = [];
  isEnabled(parameters: Record<string, unknown>, context: Record<string, unknown>): boolean {
    this.calls.push({ parameters, context });
    const tenants = String(parameters.tenants).split(',');
    const properties = context.properties as Record<string, string> | undefined;
    return tenants.includes(properties?.tenant ?? '');
  }
}

const payload = (features: ClientFeatures['features']): ClientFeatures => ({
  version: 2,
  features,
});

describe('custom strategies', () => {
  it('receive the strategy parameters and the context, and decide', () => {
    const tenant = new TenantStrategy();
    const snapshot = compile(
      payload([
        {
          name: 'beta',
          enabled: true,
          strategies: [{ name: 'tenant', parameters: { tenants: 'acme,globex' } }],
        },
      ]),
      { strategies: [tenant] },
    );
    const context = { userId: 'u1', properties: { tenant: 'acme' } };
    assert.equal(snapshot.evaluate('beta', context)?.enabled, true);
    assert.equal(snapshot.evaluate('beta', { properties: { tenant: 'initech' } })?.enabled, false);
    assert.deepEqual(tenant.calls[0], { parameters: { tenants: 'acme,globex' }, context });
  });

  it('still have their constraints and segments checked first', () => {
    const tenant = new TenantStrategy();
    const snapshot = compile(
      {
        version: 2,
        segments: [
          {
            id: 7,
            constraints: [{ contextName: 'environment', operator: 'IN', values: ['prod'] }],
          },
        ],
        features: [
          {
            name: 'beta',
            enabled: true,
            strategies: [
              {
                name: 'tenant',
                parameters: { tenants: 'acme' },
                constraints: [{ contextName: 'appName', operator: 'IN', values: ['web'] }],
                segments: [7],
              },
            ],
          },
        ],
      },
      { strategies: [tenant] },
    );
    const acme = { tenant: 'acme' };
    assert.equal(
      snapshot.evaluate('beta', { appName: 'web', environment: 'prod', properties: acme })?.enabled,
      true,
    );
    assert.equal(
      snapshot.evaluate('beta', { appName: 'ios', environment: 'prod', properties: acme })?.enabled,
      false,
    );
    assert.equal(
      snapshot.evaluate('beta', { appName: 'web', environment: 'dev', properties: acme })?.enabled,
      false,
    );
    assert.equal(tenant.calls.length, 1);
  });

  it('shadow a built-in strategy of the same name', () => {
    const never: CustomStrategy = { name: 'default', isEnabled: () => false };
    const features = payload([{ name: 'f', enabled: true, strategies: [{ name: 'default' }] }]);
    assert.equal(compile(features).evaluate('f', {})?.enabled, true);
    assert.equal(compile(features, { strategies: [never] }).evaluate('f', {})?.enabled, false);
  });

  it('get strategy variants like built-ins', () => {
    const always: CustomStrategy = { name: 'always', isEnabled: () => true };
    const snapshot = compile(
      payload([
        {
          name: 'f',
          enabled: true,
          strategies: [
            {
              name: 'always',
              parameters: { groupId: 'f' },
              variants: [{ name: 'blue', weight: 1000, payload: { type: 'string', value: 'b' } }],
            },
          ],
        },
      ]),
      { strategies: [always] },
    );
    assert.deepEqual(snapshot.evaluate('f', { userId: '1' })?.variant, {
      name: 'blue',
      enabled: true,
      payload: { type: 'string', value: 'b' },
      feature_enabled: true,
      featureEnabled: true,
    });
  });

  it('that throw evaluate to false and are reported once per flag', () => {
    const warnings: EngineWarning[] = [];
    const broken: CustomStrategy = {
      name: 'broken',
      isEnabled: () => {
        throw new Error('boom');
      },
    };
    const snapshot = compile(
      payload([
        { name: 'a', enabled: true, strategies: [{ name: 'broken' }] },
        { name: 'b', enabled: true, strategies: [{ name: 'broken' }, { name: 'default' }] },
      ]),
      { strategies: [broken], onWarning: (warning) => warnings.push(warning) },
    );
    assert.equal(warnings.length, 0, 'nothing is reported before a call throws');
    for (let i = 0; i < 5; i++) {
      const [a, b] = snapshot.evaluateAll({ userId: String(i) });
      assert.equal(a?.enabled, false);
      assert.equal(a?.reason, 'DISABLED');
      // The next strategy still applies.
      assert.equal(b?.enabled, true);
    }
    assert.deepEqual(
      warnings.map((warning) => warning.flag),
      ['a', 'b'],
    );
    assert.match(warnings[0]!.message, /broken.*boom/);
  });

  it('without a name or isEnabled are ignored with a warning', () => {
    const warnings: EngineWarning[] = [];
    const snapshot = compile(
      payload([{ name: 'f', enabled: true, strategies: [{ name: 'odd' }] }]),
      {
        strategies: [{ name: 'odd' } as unknown as CustomStrategy],
        onWarning: (warning) => warnings.push(warning),
      },
    );
    assert.equal(snapshot.evaluate('f', {})?.enabled, false);
    assert.equal(warnings.length, 2); // the bad strategy, then the flag's unknown strategy
  });
});
