import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadConfig } from '@flags/proxy';
import { configWarnings } from '../src/config/warnings.js';

const SHORT_KEY = 'demo-client-key';
const OTHER_SHORT_KEY = 'another-short-key';
const SHORT_TOKEN = 'short-upstream';

describe('configWarnings and publicSecrets', () => {
  it('leaves out only the secrets declared public; the same short secrets otherwise warn', () => {
    const options = {
      flagsUrl: 'http://127.0.0.1:9/api',
      flagsApiToken: SHORT_TOKEN,
      clientKeys: [SHORT_KEY, OTHER_SHORT_KEY],
    };
    assert.deepEqual(configWarnings(loadConfig({}, options)), [
      '2 of 2 client keys (clientKeys, proxySecrets) are shorter than 32 characters; anyone may guess them',
      'the upstream token (flagsApiToken) is shorter than 32 characters; anyone may guess it',
    ]);
    assert.deepEqual(
      configWarnings(loadConfig({}, { ...options, publicSecrets: [SHORT_KEY, SHORT_TOKEN] })),
      [
        '1 of 1 client keys (clientKeys, proxySecrets) is shorter than 32 characters; anyone may guess it',
      ],
    );
    assert.deepEqual(
      configWarnings(
        loadConfig({}, { ...options, publicSecrets: [SHORT_KEY, OTHER_SHORT_KEY, SHORT_TOKEN] }),
      ),
      [],
    );
  });
});
