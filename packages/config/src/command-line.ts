import { ConfigError } from './load.js';

/**
 * The exit status of a command line the command cannot take (an unknown option, a stray argument),
 * as clap (Unleash Edge's parser) and getopt-style tools use it; a configuration that does not
 * hold exits with 1.
 */
export const USAGE_EXIT_CODE = 2;

/**
 * A command line the command cannot take, every problem named. A `ConfigError`, so that code
 * catching those catches these too; the command exits with `USAGE_EXIT_CODE` instead of 1.
 */
export class UsageError extends ConfigError {
  constructor(problems: readonly string[]) {
    super(problems);
    this.name = 'UsageError';
  }
}

/**
 * What a command writes to stderr for a `UsageError`: one line per problem, then where to look
 * (`Run \`app --help\` for <what>.`).
 */
export function usageMessage(command: string, problems: readonly string[], what: string): string {
  return `${problems.map((problem) => `${command}: ${problem}\n`).join('')}Run \`${command} --help\` for ${what}.\n`;
}

/**
 * Edit distance between `a` and `b` where swapping two neighbours counts once (`prot` → `port`), as
 * typing mistakes go: the optimal string alignment distance.
 */
function distance(a: string, b: string): number {
  const rows = a.length + 1;
  const columns = b.length + 1;
  const d: number[] = new Array(rows * columns).fill(0);
  for (let i = 0; i < rows; i++) d[i * columns] = i;
  for (let j = 0; j < columns; j++) d[j] = j;
  for (let i = 1; i < rows; i++)
    for (let j = 1; j < columns; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(
        (d[(i - 1) * columns + j] as number) + 1,
        (d[i * columns + j - 1] as number) + 1,
        (d[(i - 1) * columns + j - 1] as number) + cost,
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, (d[(i - 2) * columns + j - 2] as number) + 1);
      d[i * columns + j] = best;
    }
  return d[rows * columns - 1] as number;
}

/**
 * The candidate a mistyped `word` most likely meant (case aside), for "did you mean …?": the one
 * fewest edits away, when those are at most 2 and at most a third of the word; else `undefined`.
 */
export function closest(word: string, candidates: Iterable<string>): string | undefined {
  const typed = word.toLowerCase();
  const allowed = Math.min(2, Math.floor(typed.length / 3));
  let best: string | undefined;
  let bestDistance = allowed + 1;
  for (const candidate of candidates) {
    const edits = distance(typed, candidate.toLowerCase());
    if (edits < bestDistance) {
      best = candidate;
      bestDistance = edits;
    }
  }
  return best;
}

/**
 * Lets a command whose output reader stopped early (`| head`) go on to its end and exit status
 * instead of dying of EPIPE half-way through its writes: what the reader no longer takes is
 * dropped. Other errors of the stream are thrown as before.
 */
export function outlivingItsReader(output: NodeJS.WritableStream): void {
  output.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
  });
}
