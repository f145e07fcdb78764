import { trustEverySenderWarning } from '@flags/serving';
import type { ProxyConfig } from './load.js';

/** Secrets shorter than this are reported at start (Unleash-format tokens are longer). */
export const MIN_SECRET_LENGTH = 32;

/** `n of m <what> (<options>) is/are shorter …`, or nothing when none is short. */
function shortSecrets(what: string, options: string, secrets: readonly string[]): string[] {
  const short = secrets.filter((secret) => secret.length < MIN_SECRET_LENGTH).length;
  if (short === 0) return [];
  const [verb, pronoun] = short === 1 ? ['is', 'it'] : ['are', 'them'];
  return [
    `${short} of ${secrets.length} ${what} (${options}) ${verb} shorter than ${MIN_SECRET_LENGTH} characters; anyone may guess ${pronoun}`,
  ];
}

/**
 * What is weak in a configuration that still works: short client keys, server-side tokens or
 * upstream token, which can be guessed; a `trustProxy` that lets any caller choose its address.
 * Warnings, not errors, so existing deployments keep starting. The messages never contain a
 * secret. Secrets in `publicSecrets` are public on purpose (the demo's, which says so itself), so
 * their length does not matter (issue 47).
 */
export function configWarnings(config: ProxyConfig): string[] {
  const guessable = (secrets: readonly string[]) =>
    secrets.filter((secret) => !config.publicSecrets.has(secret));
  const warnings = shortSecrets(
    'client keys',
    'clientKeys, proxySecrets',
    guessable(config.clientKeys),
  );
  if (
    config.flagsApiToken.length < MIN_SECRET_LENGTH &&
    !config.publicSecrets.has(config.flagsApiToken)
  ) {
    warnings.push(
      `the upstream token (flagsApiToken) is shorter than ${MIN_SECRET_LENGTH} characters; anyone may guess it`,
    );
  }
  warnings.push(
    ...shortSecrets(
      'server-side tokens',
      'expServerSideSdkConfig.tokens',
      guessable(config.serverSideTokens),
    ),
  );
  if (config.ofrepEventSecret !== undefined && config.ofrepEventSecret.length < MIN_SECRET_LENGTH) {
    warnings.push(
      `the OFREP event secret (ofrepEventSecret) is shorter than ${MIN_SECRET_LENGTH} characters; anyone may guess it and sign event-stream credentials`,
    );
  }
  const trust = trustEverySenderWarning(config.trustProxy, 'TRUST_PROXY');
  if (trust !== undefined) warnings.push(trust);
  return warnings;
}
