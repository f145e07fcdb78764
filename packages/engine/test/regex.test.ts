// The REGEX operator follows RE2. Each case is checked against re2js, the RE2 port unleash-client
// evaluates REGEX constraints with: same pattern, same input, same answer.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import { compile } from '../src/index.js';

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
  const snapshot = compile({
    version: 2,
    features: [
      {
        name: 'r',
        enabled: true,
        strategies: [
          {
            name: 'default',
            constraints: [
              { contextName: 'userId', operator: 'REGEX', value: pattern, caseInsensitive },
            ],
          },
        ],
      },
    ],
  });
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
