import type { OptionRow } from '@flags/config';
import { UPSTREAM_OPTIONS } from '../offline/index.js';
import { offlineConfig } from '../offline/options.js';
import type { OwnVariables } from './command-line.js';
import { proxyConfig } from './options.js';

function variablesOf(rows: readonly OptionRow[]): OwnVariables {
  return {
    names: new Set(rows.flatMap((row) => row.env)),
    switches: new Set(
      rows.filter((row) => row.schema.type === 'boolean').flatMap((row) => row.env),
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
