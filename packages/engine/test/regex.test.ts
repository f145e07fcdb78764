// The REGEX operator follows RE2. Each case is checked against re2js, the RE2 port unleash-client
// evaluates REGEX constraints with: same pattern, same input, same answer. Patterns the engine runs
// as a native RegExp (parse/regex.ts) are also checked character by character, for every code
// point, and on random patterns.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { before, describe, it } from 'node:test';
import { seededRandom } from '../../../test/helpers/seeded-random.js';
import { compile } from '../src/index.js';
import { linearNativeRegex } from '../src/parse/regex.js';
import { INPUT_CHARS, randomInput, randomPattern } from './fixtures/random-patterns.js';
import { regexFlagPayload } from './fixtures/regex-flag.js';

const require = createRequire(import.meta.url);
const { RE2JS } = createRequire(require.resolve('unleash-client'))('re2js') as {
  RE2JS: {
    CASE_INSENSITIVE: number;
    compile(pattern: string, flags?: number): { matcher(input: string): { find(): boolean } };
  };
};

function re2(pattern: string, input: string, caseInsensitive: boolean): boolean {
  try {
    const flags = caseInsensitive ? RE2JS.CASE_INSENSITIVE : undefined;
    return RE2JS.compile(pattern, flags).matcher(input).find();
  } catch {
    return false; // the SDK's answer for a pattern RE2 rejects
  }
}

function engine(pattern: string, input: string, caseInsensitive: boolean): boolean {
  const snapshot = compile(regexFlagPayload(pattern, 'userId', caseInsensitive));
  return snapshot.evaluate('r', { userId: input })?.enabled ?? false;
}

const CASES: readonly [pattern: string, inputs: readonly string[], caseInsensitive?: boolean][] = [
  ['^[[:alpha:]]+$', ['abc', 'ab1', '']],
  ['^[[:alnum:]_-]{3,}$', ['a_1', 'a!', 'abc-def']],
  ['^[^[:space:]]+$', ['no-space', 'a b']],
  ['[[:punct:]]', ['a.b', 'ab']],
  ['^[[:xdigit:]]+$', ['DEADbeef', 'xyz']],
  ['\\Aab\\z', ['ab', 'ab\n', 'xab']],
  ['^\\Q.*\\E$', ['.*', 'abc']],
  ['^(?P<user>[a-z]+)@', ['bob@x', '@x']],
  ['(?i)^abc$', ['ABC', 'abd']],
  ['^abc$', ['AbC', 'abc'], true],
  ['(?s)a.b', ['a\nb', 'ab']],
  ['(?m)^b$', ['a\nb\nc', 'abc']],
  ['(?is)^A.B$', ['a\nb']],
  ['^\\d+$', ['123', '١٢٣']],
  ['\\bword\\b', ['a word here', 'swordfish']],
  ['^[]a]+$', [']a', 'b']],
  ['^[a\\]]+$', [']a', 'b']],
  ['x*', ['', 'yyy']],
  ['^(a|ab)(c|bcd)(d*)$', ['abcd', 'abce']],
  ['(?=a)', ['a']],
  ['(a)\\1', ['aa']],
  ['[z-a]', ['z']],
  ['(unclosed', ['unclosed']],
  ['^\\p{Greek}+$', ['αβγ', 'abc']],
  ['^\\pL+$', ['héllo', 'h3llo']],
  ['^\\P{Lu}+$', ['abc', 'aBc']],
  ['^\\p{^Han}+$', ['abc', '漢字']],
  ['^\\p{Nope}$', ['x']],
];

describe('REGEX agrees with RE2 (re2js)', () => {
  for (const [pattern, inputs, caseInsensitive = false] of CASES) {
    it(`${pattern}${caseInsensitive ? ' (caseInsensitive)' : ''}`, () => {
      for (const input of inputs) {
        assert.equal(
          engine(pattern, input, caseInsensitive),
          re2(pattern, input, caseInsensitive),
          `${JSON.stringify(input)}`,
        );
      }
    });
  }
});

/** The fast path's RegExp for `pattern`; fails the test when the pattern is not taken natively. */
function native(pattern: string, caseInsensitive: boolean): RegExp {
  const regex = linearNativeRegex(pattern, caseInsensitive);
  assert.ok(regex, `${pattern} runs natively`);
  return regex;
}

const hex = (code: number): string => `\\x${code.toString(16).padStart(2, '0')}`;
const ASCII = Array.from({ length: 128 }, (_, code) => String.fromCharCode(code));

/**
 * Every code point (lone surrogates included) that re2js, with case folding, finds in the set of
 * all ASCII characters; the fast path must find the same ones.
 */
function foldedIntoAscii(): string[] {
  const re2Regex = RE2JS.compile('^[\\x00-\\x7F]$', RE2JS.CASE_INSENSITIVE) as unknown as {
    test(input: string): boolean;
  };
  const ours = native('^[\\x00-\\x7F]$', true);
  const found: string[] = [];
  for (let code = 0x80; code <= 0x10ffff; code++) {
    const char = String.fromCodePoint(code);
    const expected = re2Regex.test(char);
    if (ours.test(char) !== expected) assert.fail(`U+${code.toString(16)}`);
    if (expected) found.push(char);
  }
  return found;
}

describe('REGEX fast path: native RegExp, same answers as RE2', () => {
  // A non-ASCII character outside `folded` is in no (case-folded) set of ASCII members, in either
  // engine, so it is answered like 'é' or '😀' below: these inputs cover every code point.
  let folded: string[] = [];
  let inputs: string[] = [];
  before(() => {
    folded = foldedIntoAscii();
    inputs = [...ASCII, ...folded, 'é', 'İ', 'ı', '\u00a0', '\u2028', '\ufffd', '😀', '\ud800'];
  });

  it('folds exactly U+017F and U+212A into ASCII, as RE2 does', () => {
    assert.deepEqual(folded, ['\u017f', '\u212a']);
  });

  for (const caseInsensitive of [false, true]) {
    const mode = caseInsensitive ? ' (caseInsensitive)' : '';
    it(`each ASCII character, in and out of classes${mode}`, () => {
      for (let code = 0; code < 128; code++) {
        for (const pattern of [`^${hex(code)}$`, `^[${hex(code)}]$`, `^[^${hex(code)}]$`]) {
          const regex = native(pattern, caseInsensitive);
          for (const input of inputs) {
            assert.equal(regex.test(input), re2(pattern, input, caseInsensitive), pattern + input);
          }
        }
      }
    });

    it(`., \\d, \\w, \\s, their negations and classes of them${mode}`, () => {
      const patterns = [
        '.',
        '\\d',
        '\\D',
        '\\w',
        '\\W',
        '\\s',
        '\\S',
        '[\\d_]',
        '[^\\w-]',
        '[\\s]',
      ];
      for (const pattern of patterns.map((body) => `^${body}$`)) {
        const regex = native(pattern, caseInsensitive);
        for (const input of inputs) {
          assert.equal(regex.test(input), re2(pattern, input, caseInsensitive), pattern + input);
        }
      }
    });
  }

  it('random patterns on random inputs', () => {
    const random = seededRandom(20_24);
    let natively = 0;
    for (let p = 0; p < 3000; p++) {
      const pattern = randomPattern(random);
      const caseInsensitive = random() < 0.3;
      try {
        RE2JS.compile(pattern, caseInsensitive ? RE2JS.CASE_INSENSITIVE : undefined);
      } catch {
        continue;
      }
      const regex = linearNativeRegex(pattern, caseInsensitive);
      if (regex === undefined) continue;
      natively++;
      const tries = [...INPUT_CHARS, ...Array.from({ length: 30 }, () => randomInput(random))];
      for (const input of tries) {
        const mode = caseInsensitive ? 'i' : '';
        assert.equal(
          regex.test(input),
          re2(pattern, input, caseInsensitive),
          `${pattern} ${mode} ${JSON.stringify(input)}`,
        );
      }
    }
    assert.ok(natively > 500, `${natively} random patterns ran natively`);
  });

  const CHOICES: readonly [pattern: string, natively: boolean, why: string][] = [
    ['^[a-m][^@]*@example\\.(com|org)$', true, 'each choice is decided by the next character'],
    ['^user-\\d+$', true, 'digits, then the end'],
    ['@example\\.com$', true, 'unanchored, but no quantifier'],
    ['^[^@]+@[^@]+$', true, 'the @ ends the first run'],
    ['^(a|b)c*$', true, 'disjoint alternatives'],
    ['^\\d{1,3}\\.\\d{1,3}$', true, 'bounded runs split by a dot'],
    ['(a+)+$', false, 'a quantified group'],
    ['(a|aa)*b', false, 'a quantified group'],
    ['^([a-zA-Z0-9]+\\.?)*@example\\.com$', false, 'a quantified group'],
    ['^\\d*\\d*$', false, 'two runs of digits in a row'],
    ['^.*@x$', false, '. also takes the @'],
    ['^(a|ab)c$', false, 'both alternatives start with a'],
    ['^(a?|b?)$', false, 'both alternatives reach the end without consuming'],
    ['^s*S$', false, 'only when case-insensitive: s and S fold together'],
    ['[^@]*@', false, 'unanchored and unbounded: tried at every position'],
    ['^a|b$', false, 'alternation at the top'],
    ['(?i)abc', false, 'inline flags'],
    ['^\\pL+$', false, 'Unicode classes'],
    ['^é$', false, 'a non-ASCII pattern'],
    ['\\bword\\b', false, 'word boundaries'],
    ['^[[:alpha:]]+$', false, 'POSIX classes'],
    ['^a{01}$', false, 'RE2 reads this { as a literal'],
  ];

  for (const [pattern, natively, why] of CHOICES) {
    const caseInsensitive = pattern === '^s*S$';
    it(`${pattern}: ${natively ? 'native' : 're2js'} (${why})`, () => {
      assert.equal(linearNativeRegex(pattern, caseInsensitive) !== undefined, natively);
    });
  }
});
