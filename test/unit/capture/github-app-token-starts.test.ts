/**
 * The `github` preset rule reads each string with the `ghs_` starts that
 * cannot begin an app installation token spelled `ghr_` (a cost fix, see
 * `quietAppTokenStarts`). That must never change what the rule finds: the
 * installed rule, run raw on the string and on its quieted form, reports the
 * same ranges, on random strings built from what its three patterns key on.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { creator as recommended } from '@secretlint/secretlint-rule-preset-recommend';
import type { SecretLintRuleContext, SecretLintRuleCreator, SecretLintSourceCode } from '@secretlint/types';
import { quietAppTokenStarts, scanWithSecretlint } from '../../../src/capture/secretlint.js';

const github = (recommended.rules as readonly SecretLintRuleCreator<unknown>[]).find((r) => r.meta.id.endsWith('/secretlint-rule-github'))!;

/** The installed rule, unhosted: the ranges it reports for `content`. */
function rawRanges(content: string): [number, number][] {
  const found: [number, number][] = [];
  const context = {
    sharedOptions: {},
    createTranslator: () => (id: unknown) => ({ message: String(id), messageId: String(id), data: undefined }),
    report: (d: { range: readonly [number, number] }) => found.push([d.range[0], d.range[1]]),
    ignore: () => undefined,
  } as unknown as SecretLintRuleContext;
  void github.create(context, {}).file?.({ content } as SecretLintSourceCode);
  return found.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
}

const seg = (n: number, c = 'a') => c.repeat(n);
const FRAGMENTS = [
  'ghs_',
  'ghs_1_',
  'ghs_12345678901234567890_',
  'ghr_',
  'ghp_',
  'gho_',
  'github_pat_',
  '1',
  '_',
  '-',
  '.',
  ' ',
  'é',
  'x',
  seg(36),
  seg(82, 'B'),
  seg(500),
  seg(990, 'z'),
];

describe('the github rule reads quieted app-token starts', () => {
  it('finds exactly the ranges it finds on the string itself', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...FRAGMENTS), { maxLength: 40 }), (parts) => {
        const text = parts.join('');
        const quiet = quietAppTokenStarts(text);
        expect(quiet.length).toBe(text.length);
        expect(rawRanges(quiet)).toEqual(rawRanges(text));
      }),
      { numRuns: 400 },
    );
  });

  it.each([
    ['an app token', `ghs_123_${seg(40)}.${seg(300)}.${seg(40)}`],
    ['an app token whose first segment is the longest allowed', `x ghs_${'9'.repeat(20)}_${seg(1000)}.${seg(10)}.${seg(10)} y`],
    ['a first segment one too long', `ghs_${'9'.repeat(20)}_${seg(1001)}.${seg(10)}.${seg(10)}`],
    ['a classic ghs token in a run of app-token starts', `${'ghs_1_'.repeat(50)} ghs_${seg(36)} ${'ghs_1_'.repeat(50)}`],
    ['an app token after hopeless starts', `${'ghs_1_'.repeat(300)} ghs_7_${seg(20)}.${seg(20)}.${seg(20)}`],
  ])('%s: same ranges', (_name, text) => {
    expect(rawRanges(quietAppTokenStarts(text))).toEqual(rawRanges(text));
  });

  it('the hosted preset still finds an app token and a classic ghs token', () => {
    const app = `ghs_123_${seg(40)}.${seg(300)}.${seg(40)}`;
    const classic = `ghs_${seg(36, 'Q')}`;
    const text = `${'ghs_1_'.repeat(20)} ${app} and ${classic}.`;
    const ranges = scanWithSecretlint(text)
      .reports.filter((r) => r.rule === 'github')
      .map((r) => text.slice(r.range[0], r.range[1]));
    expect(ranges).toEqual(expect.arrayContaining([app, classic]));
  });
});
