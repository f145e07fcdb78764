/**
 * REGEX patterns follow RE2, which re2js runs in time linear in the input (operators/regex.ts).
 * re2js costs a few hundred nanoseconds per test, ten times a native RegExp, so the patterns
 * for which a native RegExp is *proven* both equivalent to RE2 and linear are run natively.
 *
 * Equivalence. Only a small subset of RE2 syntax is accepted here, every part of which means the
 * same in both engines once translated: ASCII characters (plain, or escaped as `\.`, `\t`,
 * `\x41`), `.`, `\d \w \s` and their negations, bracket classes of ASCII members (ranges, `^`, a
 * leading `]`, a literal `-`), groups, alternation inside groups, `^` first and `$` last, and
 * quantifiers on single characters. Every character set is written out explicitly in the emitted
 * RegExp (with the `u` flag, so both engines step by code point), never left to JavaScript's own
 * `\s`, `.` or case folding, which differ from RE2's. `caseInsensitive` is applied as RE2 applies
 * it: each set's members are closed under case folding (ASCII letters, plus U+017F with `s` and
 * U+212A with `k`, the only non-ASCII characters that fold into ASCII), then the set is negated
 * if it is. `test/regex.test.ts` checks these facts against re2js for every code point.
 *
 * Linear time. A backtracking matcher is slow only when, at some choice point (an alternation,
 * or a quantifier deciding to take one more character), two branches can both go on with the same
 * next character: it then explores both, and nested or repeated choices multiply. Accepted
 * patterns are deterministic: at every choice point the characters each branch (followed by the
 * rest of the pattern) can consume first are disjoint, and at most one branch can reach `$`
 * without consuming. So of two paths that part at a choice point, at most one consumes the next
 * character: each input position is consumed at most once per start position, and between two
 * consumptions the matcher does work bounded by the pattern's size. Quantifiers apply to single
 * characters only (so no loop can repeat without consuming). A pattern that starts with `^` is
 * tried at one start position: time O(input × pattern). One that does not is tried at every
 * position, so it is accepted only when a match can consume at most `MAX_UNANCHORED_SPAN`
 * characters. Everything else goes to re2js.
 */

/** A set of characters: ASCII members as bits (`negated`: every character but those). */
interface CharSet {
  readonly bits: bigint;
  readonly negated: boolean;
}

type Node =
  | {
      readonly kind: 'chars';
      readonly set: CharSet;
      readonly min: number;
      readonly max: number;
      readonly lazy: boolean;
    }
  | { readonly kind: 'group'; readonly alternatives: readonly (readonly Node[])[] }
  | { readonly kind: 'start' }
  | { readonly kind: 'end' };

/** The pattern is outside what is proven here; re2js runs it. */
class NotProven extends Error {}

const MAX_UNANCHORED_SPAN = 256;
/** RE2's largest repetition count; re2js rejects larger ones before this module sees them. */
const MAX_REPEAT = 1000;
/** Steps of the determinism check; a pattern needing more goes to re2js. */
const ANALYSIS_BUDGET = 20_000;

const bit = (code: number): bigint => 1n << BigInt(code);

function range(from: number, to: number): bigint {
  let bits = 0n;
  for (let code = from; code <= to; code++) bits |= bit(code);
  return bits;
}

const UPPER = range(65, 90);
const LOWER = range(97, 122);
const DIGITS = range(48, 57);
const WORD = DIGITS | UPPER | LOWER | bit(95);
/** RE2's `\s`: tab, newline, form feed, carriage return, space (not `\v`). */
const SPACE = bit(9) | bit(10) | bit(12) | bit(13) | bit(32);
const NEWLINE = bit(10);
/** Non-ASCII characters RE2 folds into ASCII letters: ſ (U+017F) with s, K (U+212A) with k. */
const FOLDS_OUT_OF_ASCII: readonly [letter: number, outside: number][] = [
  [115, 0x17f],
  [107, 0x212a],
];

// Constants, not state: frozen, and CharSet's fields are readonly.
const EMPTY: CharSet = Object.freeze({ bits: 0n, negated: false });
const CLASS_ESCAPES: Readonly<Record<string, CharSet>> = Object.freeze({
  d: { bits: DIGITS, negated: false },
  D: { bits: DIGITS, negated: true },
  w: { bits: WORD, negated: false },
  W: { bits: WORD, negated: true },
  s: { bits: SPACE, negated: false },
  S: { bits: SPACE, negated: true },
});
const CONTROL_ESCAPES: Readonly<Record<string, number>> = Object.freeze({
  a: 7,
  f: 12,
  t: 9,
  n: 10,
  r: 13,
  v: 11,
});

/** The other case of every ASCII letter in `bits` added. */
function foldCase(bits: bigint): bigint {
  return bits | ((bits & UPPER) << 32n) | ((bits & LOWER) >> 32n);
}

function union(a: CharSet, b: CharSet): CharSet {
  if (!a.negated && !b.negated) return { bits: a.bits | b.bits, negated: false };
  if (a.negated && b.negated) return { bits: a.bits & b.bits, negated: true };
  const [negated, plain] = a.negated ? [a, b] : [b, a];
  return { bits: negated.bits & ~plain.bits, negated: true };
}

/**
 * Whether some character is in both sets. Exact: non-ASCII characters are in a set only through
 * `negated` (all of them but the fold partners of its ASCII members, which follow those members).
 */
function overlaps(a: CharSet, b: CharSet): boolean {
  if (a.negated && b.negated) return true;
  if (!a.negated && !b.negated) return (a.bits & b.bits) !== 0n;
  const [negated, plain] = a.negated ? [a, b] : [b, a];
  return (plain.bits & ~negated.bits) !== 0n;
}

class Parser {
  private i = 0;

  constructor(
    private readonly source: string,
    private readonly fold: boolean,
  ) {}

  parse(): Node[] {
    const items: Node[] = [];
    if (this.source.startsWith('^')) {
      items.push({ kind: 'start' });
      this.i = 1;
    }
    const anchoredEnd = this.source.endsWith('$') && !this.source.endsWith('\\$');
    const end = anchoredEnd ? this.source.length - 1 : this.source.length;
    this.sequence(items, end);
    // `^a|b` is `(^a)|b` in RE2: alternation at the top would undo the anchors.
    if (this.i !== end) throw new NotProven();
    if (anchoredEnd) items.push({ kind: 'end' });
    return items;
  }

  /** Items up to `|`, `)` or `end`, appended to `items`. */
  private sequence(items: Node[], end: number): void {
    const src = this.source;
    while (this.i < end) {
      const char = src[this.i]!;
      if (char === '|' || char === ')') return;
      if (char === '(') {
        items.push(this.group(end));
        continue;
      }
      const set = this.atom();
      const [min, max, lazy] = this.quantifier(end);
      items.push({ kind: 'chars', set, min, max, lazy });
    }
  }

  private group(end: number): Node {
    const src = this.source;
    this.i++;
    if (src[this.i] === '?') {
      const named = /^\?P?<[A-Za-z_][A-Za-z0-9_]*>/.exec(src.slice(this.i));
      if (src[this.i + 1] === ':') this.i += 2;
      else if (named) this.i += named[0].length;
      else throw new NotProven(); // inline flags and the like
    }
    const alternatives: Node[][] = [];
    for (;;) {
      const items: Node[] = [];
      this.sequence(items, end);
      alternatives.push(items);
      if (src[this.i] === '|') this.i++;
      else if (src[this.i] === ')') break;
      else throw new NotProven();
    }
    this.i++;
    if (/^[*+?{]/.test(src.slice(this.i, this.i + 1))) throw new NotProven(); // quantified group
    return { kind: 'group', alternatives };
  }

  /** One character set: a literal, `.`, an escape or a bracket class. */
  private atom(): CharSet {
    const src = this.source;
    const char = src[this.i]!;
    if ('^$*+?{'.includes(char)) throw new NotProven(); // anchors inside, or a stray quantifier
    if (char === '[') return this.folded(this.bracket());
    if (char === '.') {
      this.i++;
      return { bits: NEWLINE, negated: true };
    }
    if (char === '\\') {
      const next = src[this.i + 1];
      const classEscape = next === undefined ? undefined : CLASS_ESCAPES[next];
      if (classEscape !== undefined) {
        this.i += 2;
        return this.folded(classEscape);
      }
    }
    return this.folded({ bits: bit(this.character()), negated: false });
  }

  /** A single character, plain or escaped; anything else RE2 reads differently is not proven. */
  private character(): number {
    const src = this.source;
    const code = src.charCodeAt(this.i);
    if (code >= 128) throw new NotProven();
    if (code !== 92 /* \ */) {
      this.i++;
      return code;
    }
    const next = src.charCodeAt(this.i + 1);
    if (Number.isNaN(next) || next >= 128) throw new NotProven();
    const hexEscape = /^\\x(?:([0-9A-Fa-f]{2})|\{([0-9A-Fa-f]{1,6})\})/.exec(src.slice(this.i));
    if (hexEscape) {
      const value = Number.parseInt(hexEscape[1] ?? hexEscape[2]!, 16);
      if (value >= 128) throw new NotProven();
      this.i += hexEscape[0].length;
      return value;
    }
    const control = CONTROL_ESCAPES[src[this.i + 1]!];
    const alphanumeric = /[0-9A-Za-z]/.test(src[this.i + 1]!);
    if (control === undefined && alphanumeric) throw new NotProven(); // \b, \A, \p, \Q, \1 …
    this.i += 2;
    // RE2 reads a backslash before any ASCII punctuation as that character.
    return control ?? next;
  }

  /** `[…]` as RE2 parses it: a `]` right after `[` or `[^` and a `-` not forming a range are literal. */
  private bracket(): CharSet {
    const src = this.source;
    this.i++;
    const negated = src[this.i] === '^';
    if (negated) this.i++;
    let bits = 0n;
    let first = true;
    while (first || src[this.i] !== ']') {
      if (this.i >= src.length) throw new NotProven();
      first = false;
      if (src.startsWith('[:', this.i)) throw new NotProven(); // POSIX classes
      const classEscape = src[this.i] === '\\' ? CLASS_ESCAPES[src[this.i + 1] ?? ''] : undefined;
      if (classEscape !== undefined) {
        // A negated escape inside a class would need a set this module does not describe.
        if (classEscape.negated) throw new NotProven();
        bits |= classEscape.bits;
        this.i += 2;
        continue;
      }
      const low = this.character();
      let high = low;
      if (src[this.i] === '-' && src[this.i + 1] !== ']' && this.i + 1 < src.length) {
        this.i++;
        high = this.character();
        if (high < low) throw new NotProven();
      }
      bits |= range(low, high);
    }
    this.i++;
    return { bits, negated };
  }

  /** RE2 folds a set's members, then negates: only the members are closed under case folding. */
  private folded(set: CharSet): CharSet {
    return this.fold ? { bits: foldCase(set.bits), negated: set.negated } : set;
  }

  private quantifier(end: number): [min: number, max: number, lazy: boolean] {
    const src = this.source;
    let min = 1;
    let max = 1;
    const char = this.i < end ? src[this.i] : undefined;
    if (char === '*' || char === '+' || char === '?') {
      min = char === '+' ? 1 : 0;
      max = char === '?' ? 1 : Number.POSITIVE_INFINITY;
      this.i++;
    } else if (char === '{') {
      // RE2 reads a `{` that starts no count (`{,2}`, a leading zero) as a literal.
      const counts = /^\{(0|[1-9]\d*)(,(0|[1-9]\d*)?)?\}/.exec(src.slice(this.i, end));
      if (!counts) throw new NotProven();
      min = Number(counts[1]);
      max =
        counts[2] === undefined
          ? min
          : counts[3] === undefined
            ? Number.POSITIVE_INFINITY
            : Number(counts[3]);
      if (min > MAX_REPEAT || max < min || (max > MAX_REPEAT && max !== Number.POSITIVE_INFINITY))
        throw new NotProven();
      this.i += counts[0].length;
    } else {
      return [1, 1, false];
    }
    const lazy = this.i < end && src[this.i] === '?';
    if (lazy) this.i++;
    if (this.i < end && '*+?{'.includes(src[this.i]!)) throw new NotProven(); // `a**`, `a{2}{3}`
    return [min, max, lazy];
  }
}

/** The rest of the pattern after a point: the remaining items of a sequence, then its parent's. */
interface Rest {
  readonly items: readonly Node[];
  readonly from: number;
  readonly next: Rest | undefined;
}

/** What a path can do first: consume one of `chars`, or (`end`) reach `$` without consuming. */
interface First {
  chars: CharSet;
  end: boolean;
}

class Analysis {
  private steps = 0;

  /** Throws NotProven unless every choice point of `items` (followed by `next`) is deterministic. */
  check(items: readonly Node[], next: Rest | undefined): void {
    for (let i = 0; i < items.length; i++) {
      const node = items[i]!;
      if (node.kind === 'chars' && node.min < node.max) {
        // One more character, or on with the rest: the rest must not start with that character.
        if (overlaps(node.set, this.first(items, i + 1, next).chars)) throw new NotProven();
      } else if (node.kind === 'group') {
        const rest: Rest = { items, from: i + 1, next };
        const firsts = node.alternatives.map((alternative) => this.first(alternative, 0, rest));
        for (let a = 0; a < firsts.length; a++) {
          for (let b = a + 1; b < firsts.length; b++) {
            const [x, y] = [firsts[a]!, firsts[b]!];
            if (overlaps(x.chars, y.chars) || (x.end && y.end)) throw new NotProven();
          }
        }
        for (const alternative of node.alternatives) this.check(alternative, rest);
      }
    }
  }

  /**
   * What can come first from `items[from]` on, then `next`. Reaching the end of the pattern adds
   * nothing: the match has succeeded there, and the search stops.
   */
  private first(items: readonly Node[], from: number, next: Rest | undefined): First {
    const out: First = { chars: EMPTY, end: false };
    for (let i = from; i < items.length; i++) {
      if (++this.steps > ANALYSIS_BUDGET) throw new NotProven();
      const node = items[i]!;
      if (node.kind === 'start') continue;
      if (node.kind === 'end') {
        out.end = true;
        return out;
      }
      if (node.kind === 'chars') {
        out.chars = union(out.chars, node.set);
        if (node.min > 0) return out;
        continue;
      }
      const rest: Rest = { items, from: i + 1, next };
      for (const alternative of node.alternatives) {
        const branch = this.first(alternative, 0, rest);
        out.chars = union(out.chars, branch.chars);
        out.end ||= branch.end;
      }
      return out;
    }
    if (next === undefined) return out;
    const after = this.first(next.items, next.from, next.next);
    return { chars: union(out.chars, after.chars), end: out.end || after.end };
  }
}

/** Most characters one match of `items` can consume (Infinity when unbounded). */
function span(items: readonly Node[]): number {
  let total = 0;
  for (const node of items) {
    if (node.kind === 'chars') total += node.max;
    else if (node.kind === 'group') total += Math.max(...node.alternatives.map(span));
  }
  return total;
}

/** One character in the emitted source: letters and digits as they are, others escaped. */
function char(code: number): string {
  const text = String.fromCodePoint(code);
  return /[0-9A-Za-z]/.test(text) ? text : `\\u{${code.toString(16)}}`;
}

function setSource(set: CharSet, fold: boolean): string {
  let members = '';
  for (let code = 0; code < 128; code++) {
    if ((set.bits & bit(code)) === 0n) continue;
    let last = code;
    while (last < 127 && (set.bits & bit(last + 1)) !== 0n) last++;
    members += last === code ? char(code) : `${char(code)}-${char(last)}`;
    code = last;
  }
  if (fold) {
    for (const [letter, outside] of FOLDS_OUT_OF_ASCII) {
      if ((set.bits & bit(letter)) !== 0n) members += char(outside);
    }
  }
  const single = !set.negated && /^(?:[0-9A-Za-z]|\\u\{[0-9a-f]+\})$/.test(members);
  return single ? members : `[${set.negated ? '^' : ''}${members}]`;
}

function source(items: readonly Node[], fold: boolean): string {
  let out = '';
  for (const node of items) {
    if (node.kind === 'start') out += '^';
    else if (node.kind === 'end') out += '$';
    else if (node.kind === 'group') {
      out += `(?:${node.alternatives.map((alternative) => source(alternative, fold)).join('|')})`;
    } else {
      out += setSource(node.set, fold);
      if (node.min !== 1 || node.max !== 1) {
        const max = node.max === Number.POSITIVE_INFINITY ? '' : String(node.max);
        out += `{${node.min},${max}}${node.lazy ? '?' : ''}`;
      }
    }
  }
  return out;
}

/**
 * A native RegExp that answers exactly as RE2 for `pattern` in time linear in the input, or
 * undefined when that is not proven for this pattern. Call it only for patterns RE2 accepts.
 */
export function linearNativeRegex(pattern: string, caseInsensitive: boolean): RegExp | undefined {
  try {
    const items = new Parser(pattern, caseInsensitive).parse();
    new Analysis().check(items, undefined);
    if (items[0]?.kind !== 'start' && span(items) > MAX_UNANCHORED_SPAN) return undefined;
    return new RegExp(source(items, caseInsensitive), 'u');
  } catch {
    // NotProven, or (never expected) an emitted source the RegExp parser rejects: re2js runs it.
    return undefined;
  }
}
