import { helpText } from '@flags/config';
import { DEFAULT_DIR } from './command-line.js';
import { TOKEN_VARIABLE, URL_VARIABLE } from './run.js';

const SYNOPSIS =
  'pull|plan|apply|validate|manifest|schema [--dir <dir>] [--url <server>] [--token <admin token>] [OPTIONS] | -h|--help | -V|--version';

const EXAMPLES = [
  {
    doc: 'Write the flags of a server (and its projects, environments, segments, context fields, tag types) to files',
    command: `${TOKEN_VARIABLE}='*:*.<secret>' flags pull --url https://flags.example.com --dir flags`,
  },
  {
    doc: 'Show what apply would change, field by field; exit 0 with no changes, 2 with changes, 1 on an error',
    command: 'flags plan --dir flags --detailed-exitcode',
  },
  {
    doc: 'The plan as Markdown, for a pull-request comment',
    command: 'flags plan --dir flags --output markdown > plan.md',
  },
  {
    doc: 'Make the server match the files (saved plan: flags edited since it are conflicts)',
    command: 'flags plan --out plan.json && flags apply --plan plan.json',
  },
  {
    doc: 'The OpenFeature CLI manifest, for typed flag accessors',
    command: 'flags manifest --dir flags --out flags.json',
  },
];

const SUBCOMMANDS = [
  {
    usage: 'pull [--dir <dir>] [--url <server>] [--token <token>]',
    doc: 'Writes the server’s projects.yaml, environments.yaml, segments.yaml, context-fields.yaml, tag-types.yaml and one folder per project with one file per flag (<project>/<flag>.yaml) into <dir>, with flags.schema.json beside them; flag files of flags the server no longer has are removed.',
  },
  {
    usage:
      'plan [--dir <dir>] [--detailed-exitcode] [--output text|json|markdown] [--out <plan file>]',
    doc: 'Compares the files with the server: what apply would create, update and archive, field by field, in the fields the files own (a flag’s `ui:` list names those people own: they are shown, never changed). An owned field changed on the server after its file shows as drift, with the author and time from the event log. Exits 0, or 2 with changes when --detailed-exitcode is given, 1 on an error. --out saves the plan for apply --plan.',
  },
  {
    usage: 'apply [--dir <dir>] [--plan <plan file>] [--output text|json|markdown]',
    doc: 'Makes the server match the files: context fields and segments before the flags using them, parents before children, each flag written with If-Match. A flag edited since it was planned is reported as a conflict and nothing of it is written; exits 1 when any is.',
  },
  {
    usage: 'validate [--dir <dir>]',
    doc: 'Checks the files (schema, unknown keys, names that must exist) and prints every problem as file:line:column; exits 1 when there is one.',
  },
  {
    usage: 'manifest [--dir <dir>] [--out <file>]',
    doc: 'Writes the OpenFeature CLI flag manifest (keys, types, defaults) of the files.',
  },
  {
    usage: 'schema [--out <file>]',
    doc: 'Writes the JSON Schema of the files.',
  },
];

/** `flags --help`. */
export function help(): string {
  const page = helpText({
    command: 'flags',
    synopsis: SYNOPSIS,
    summary: 'feature flags as code: pull, plan and apply against flags-server or unleash-server.',
    examples: EXAMPLES,
    subcommands: SUBCOMMANDS,
    rows: [],
  });
  // The generic page ends with the options read from the environment; flags has two, said here.
  const end = page.indexOf('Configured by environment variables');
  return `${end === -1 ? page : page.slice(0, end)}Environment:
  ${URL_VARIABLE}    The server’s URL, when --url is not given.
  ${TOKEN_VARIABLE}   An admin token, when --token is not given.
  --dir defaults to ${DEFAULT_DIR}.
`;
}
