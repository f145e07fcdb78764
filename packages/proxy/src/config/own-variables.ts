import type { OptionRow } from '@flags/config';
import { UPSTREAM_OPTIONS } from '../offline/index.js';
import { offlineConfig } from '../offline/options.js';
import { PROBE_EDGE_VARIABLES } from '../probe.js';
import type { OwnVariables } from './command-line.js';
import { proxyConfig } from './options.js';

function variablesOf(rows: readonly OptionRow[]): OwnVariables {
  return {
    names: new Set(rows.flatMap((row) => row.env)),
    switches: new Set(
      rows
        .filter((row) => (row.schema as { type?: unknown }).type === 'boolean')
        .flatMap((row) => row.env),
    ),
  };
}

/**
 * The variables a serving command takes as `--kebab-case` options: every option's; offline, not the
 * upstream's own (as Edge refuses `--tokens` there) but the offline mode's.
 */
export function servingVariables(command: 'edge' | 'offline' | undefined): OwnVariables {
  if (command !== 'offline') return variablesOf(proxyConfig.options);
  return variablesOf([
    ...proxyConfig.options.filter((row) => !UPSTREAM_OPTIONS.has(row.key)),
    ...offlineConfig.options,
  ]);
}

/**
 * The options of ours that read an Edge variable: the proxy's and offline mode's, or the probes'
 * (`EDGE_URL`, `CA_CERTIFICATE_FILE`). The README's table of Edge options names them.
 */
export function edgeVariableReaders(variable: string): string[] {
  const options = [...proxyConfig.options, ...offlineConfig.options]
    .filter((row) => row.env.includes(variable))
    .map((row) => row.key);
  return options.length === 0 && PROBE_EDGE_VARIABLES.has(variable)
    ? ['flags-proxy health|ready']
    : options;
}
