export {
  closest,
  outlivingItsReader,
  USAGE_EXIT_CODE,
  UsageError,
  usageMessage,
} from './command-line.js';
export { describe, formats } from './describe.js';
export {
  type Example,
  type HelpPage,
  helpText,
  markdownTable,
  type ProfileColumn,
  replaceSection,
  type Subcommand,
} from './docs.js';
export { ConfigError, type ConfigSchema, configSchema, type Environment } from './load.js';
export {
  type EnvVariable,
  group,
  type InCode,
  type Loaded,
  type OptionMeta,
  type OptionRow,
  option,
  optionMeta,
  optionRows,
} from './option.js';
export { type ProbeResult, type ProbeWords, probeUrl } from './probe.js';
export { Type } from './type.js';
export {
  codeValue,
  envValue,
  invertedVariable,
  secondsVariable,
  splitList,
} from './values.js';
