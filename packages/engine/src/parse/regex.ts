/**
 * The REGEX operator follows RE2 syntax (client specification file 21; the SDKs use RE2 ports).
 * Patterns are translated once into a native RegExp: inline flags `(?ims)` become RegExp flags,
 * POSIX classes `[[:alpha:]]` are expanded, `\A`, `\z`, `\Q…\E` and `(?P<name>` are rewritten,
 * Unicode classes `\pL`, `\p{Greek}` switch the RegExp to Unicode mode.
 * What RE2 does not have (look-around, back-references) is rejected, as RE2 rejects it.
 * Known approximation: flags of a scoped group `(?i:…)` apply to the whole pattern.
 */

const POSIX_CLASSES: Readonly<Record<string, string>> = {
  alnum: '0-9A-Za-z',
  alpha: 'A-Za-z',
  ascii: '\\x00-\\x7F',
  blank: '\\t ',
  cntrl: '\\x00-\\x1F\\x7F',
  digit: '0-9',
  graph: '!-~',
  lower: 'a-z',
  print: ' -~',
  punct: '!-\\/:-@\\[-`{-~',
  space: '\\t\\n\\v\\f\\r ',
  upper: 'A-Z',
  word: '0-9A-Za-z_',
  xdigit: '0-9A-Fa-f',
};

function isUnicodeProperty(property: string): boolean {
  try {
    new RegExp(`\\p{${property}}`, 'u');
    return true;
  } catch {
    return false;
  }
}

const isCategory = (name: string): boolean => isUnicodeProperty(`General_Category=${name}`);
const isScript = (name: string): boolean => isUnicodeProperty(`Script=${name}`);

export type RegexResult = { readonly regex: RegExp } | { readonly error: string };

function escapeLiteral(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');
}

class Translator {
  private out = '';
  private flags = new Set<string>();
  private unicode = false;
  private i = 0;

  constructor(private readonly source: string) {}

  run(caseInsensitive: boolean): RegexResult {
    if (caseInsensitive) this.flags.add('i');
    const src = this.source;
    while (this.i < src.length) {
      const problem = this.step();
      if (problem !== undefined) return { error: problem };
    }
    if (this.unicode) this.flags.add('u');
    try {
      return { regex: new RegExp(this.out, [...this.flags].sort().join('')) };
    } catch (error) {
      return { error: (error as Error).message };
    }
  }

  private step(): string | undefined {
    const src = this.source;
    const char = src[this.i]!;
    if (char === '\\') return this.escape(false);
    if (char === '[') return this.charClass();
    if (char === '(' && src[this.i + 1] === '?') return this.group();
    this.out += char;
    this.i++;
    return undefined;
  }

  private escape(inClass: boolean): string | undefined {
    const src = this.source;
    const next = src[this.i + 1];
    if (next === undefined) return 'trailing backslash';
    if (/[1-9]/.test(next) || next === 'k') return 'back-references are not supported (RE2)';
    if (next === 'p' || next === 'P') return this.unicodeClass(next === 'P');
    if (next === 'Q') {
      const end = src.indexOf('\\E', this.i + 2);
      const literal = src.slice(this.i + 2, end === -1 ? src.length : end);
      this.out += escapeLiteral(literal);
      this.i = end === -1 ? src.length : end + 2;
      return undefined;
    }
    if (!inClass && next === 'A') this.out += '(?<![\\s\\S])';
    else if (!inClass && next === 'z') this.out += '(?![\\s\\S])';
    else this.out += `\\${next}`;
    this.i += 2;
    return undefined;
  }

  /** `\pL`, `\p{Greek}`, `\P{Lu}`, `\p{^Han}`: JS has them in Unicode mode (`u` flag). */
  private unicodeClass(negated: boolean): string | undefined {
    const match = /^(?:\{(\^?)([A-Za-z_]+)\}|([A-Za-z]))/.exec(this.source.slice(this.i + 2));
    if (!match) return 'malformed Unicode class';
    const name = match[2] ?? match[3]!;
    const negate = negated !== (match[1] === '^');
    // General categories (L, Lu, Nd, …) keep their name; anything else is a script (Greek, Han…).
    const property = isCategory(name) ? name : `Script=${name}`;
    if (!isCategory(name) && !isScript(name)) return `unknown Unicode class ${name}`;
    this.out += `\\${negate ? 'P' : 'p'}{${property}}`;
    this.unicode = true;
    this.i += 2 + match[0].length;
    return undefined;
  }

  private charClass(): string | undefined {
    const src = this.source;
    this.out += '[';
    this.i++;
    if (src[this.i] === '^') {
      this.out += '^';
      this.i++;
    }
    // RE2 reads a `]` right after the opening bracket as a literal.
    if (src[this.i] === ']') {
      this.out += '\\]';
      this.i++;
    }
    while (this.i < src.length && src[this.i] !== ']') {
      if (src[this.i] === '\\') {
        const problem = this.escape(true);
        if (problem !== undefined) return problem;
        continue;
      }
      const posix = /^\[:(\^?)([a-z]+):\]/.exec(src.slice(this.i));
      if (posix) {
        const expansion = POSIX_CLASSES[posix[2]!];
        if (expansion === undefined) return `unknown class [:${posix[2]}:]`;
        if (posix[1]) return 'negated POSIX classes are not supported';
        this.out += expansion;
        this.i += posix[0].length;
        continue;
      }
      this.out += src[this.i] === '[' ? '\\[' : src[this.i];
      this.i++;
    }
    if (this.i >= src.length) return 'missing closing ]';
    this.out += ']';
    this.i++;
    return undefined;
  }

  private group(): string | undefined {
    const rest = this.source.slice(this.i + 2);
    if (/^(?:=|!|<=|<!)/.test(rest)) return 'look-around is not supported (RE2)';
    const named = /^P?<([A-Za-z_][A-Za-z0-9_]*)>/.exec(rest);
    if (named) {
      this.out += `(?<${named[1]}>`;
      this.i += 2 + named[0].length;
      return undefined;
    }
    const inline = /^([a-zA-Z-]+)([:)])/.exec(rest);
    if (!inline) {
      this.out += '(?';
      this.i += 2;
      return undefined;
    }
    for (const flag of inline[1]!) {
      if (flag !== 'i' && flag !== 'm' && flag !== 's') return `unsupported flag ${flag}`;
      this.flags.add(flag);
    }
    if (inline[2] === ':') this.out += '(?:';
    this.i += 2 + inline[0].length;
    return undefined;
  }
}

/** A native RegExp for an RE2 pattern, or the reason it cannot be used. */
export function compileRegex(pattern: string, caseInsensitive: boolean): RegexResult {
  return new Translator(pattern).run(caseInsensitive);
}
