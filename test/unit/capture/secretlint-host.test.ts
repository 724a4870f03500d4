/**
 * The synchronous host of the secretlint recommended preset
 * (src/capture/secretlint.ts): which rules run, the pinned version, and the
 * ways a rule can fail (it must fail closed, never open).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { SecretLintRuleCreator } from '@secretlint/types';
import { redactText } from '../../../src/capture/redact.js';
import { HOSTED_RULE_IDS, PRESET_RULE_IDS, SKIPPED_RULES, createSecretlintHost, scanWithSecretlint } from '../../../src/capture/secretlint.js';
import { ORDINARY_COMMANDS, plantedSecrets } from '../../support/secret-corpus.js';
import { ROOT } from '../../support/paths.js';

const PRESET = '@secretlint/secretlint-rule-preset-recommend';

function installedPreset(): { version: string; engines?: { node?: string } } {
  const require = createRequire(path.join(ROOT, 'package.json'));
  // the package's exports list ./package.json
  return JSON.parse(readFileSync(require.resolve(`${PRESET}/package.json`), 'utf8')) as { version: string; engines?: { node?: string } };
}

const rule = (
  id: string,
  file: (source: { content: string }, report: (r: [number, number]) => void, ignore: () => void) => unknown,
): SecretLintRuleCreator<unknown> => ({
  messages: {},
  meta: { id: `@secretlint/secretlint-rule-${id}`, type: 'scanner', recommended: true, supportedContentTypes: ['text'] },
  create: (context) => ({
    file: (source) =>
      file(
        source,
        (range) => context.report({ message: context.createTranslator({})('X' as never), range }),
        () => context.ignore({ message: context.createTranslator({})('X' as never), range: [0, source.content.length], targetRuleId: '*' }),
      ) as void,
  }),
});

describe('the hosted secretlint preset', () => {
  it("is the exact version package.json pins, and it runs on every Node the project's engines admit", () => {
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; engines: { node: string } };
    const installed = installedPreset();
    expect(pkg.dependencies[PRESET], 'pinned exactly: a new preset version brings rules the planted corpus must cover').toBe(installed.version);
    // the lowest x.y.z each `>=x.y.z` range admits, compared as numbers
    const floor = (range: string | undefined): number[] => (/>=\s*([\d.]+)/.exec(range ?? '')?.[1] ?? '0').split('.').map(Number);
    const [ours, theirs] = [floor(pkg.engines.node), floor(installed.engines?.node)];
    const cmp = [0, 1, 2].map((i) => (ours[i] ?? 0) - (theirs[i] ?? 0)).find((d) => d !== 0) ?? 0;
    expect(cmp, `the project admits node ${pkg.engines.node}, the preset wants ${installed.engines?.node}`).toBeGreaterThanOrEqual(0);
  });

  it('runs every scanner rule of the preset but the skipped ones, each skip with a reason', () => {
    expect(PRESET_RULE_IDS.length).toBeGreaterThanOrEqual(20);
    expect([...HOSTED_RULE_IDS, ...Object.keys(SKIPPED_RULES)].sort()).toEqual([...PRESET_RULE_IDS].sort());
    for (const reason of Object.values(SKIPPED_RULES)) expect(reason.length).toBeGreaterThan(20);
  });

  it('no preset rule throws or goes asynchronous on the corpora or on random text', () => {
    for (const t of [...plantedSecrets().map((p) => p.line), ...ORDINARY_COMMANDS]) expect(scanWithSecretlint(t).failed, t).toBe(false);
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 400 }), (t) => {
        expect(scanWithSecretlint(t).failed).toBe(false);
      }),
      { numRuns: 300 },
    );
  });

  it('content cannot switch its own redaction off with secretlint-disable comments', () => {
    const token = ['gh', 'p_', 'Zq9'.repeat(12)].join('');
    for (const text of [
      `// secretlint-disable\n${token}\n// secretlint-enable`,
      `${token} // secretlint-disable-line`,
      `<!-- secretlint-disable-next-line -->\n${token}`,
    ]) {
      expect(redactText(text)).not.toContain(token);
      expect(scanWithSecretlint(text).reports.map((r) => r.rule)).toContain('github');
    }
  });

  it('reports carry ranges, never the matched text', () => {
    const token = ['SG', '.', 'a'.repeat(22), '.', 'b'.repeat(43)].join('');
    const found = scanWithSecretlint(`key ${token} end`);
    expect(found.reports).toEqual([{ rule: 'sendgrid', range: [4, 4 + token.length] }]);
    expect(JSON.stringify(found)).not.toContain('aaaa');
  });
});

describe('a hosted rule that misbehaves fails closed', () => {
  it('a rule that throws marks the scan failed', () => {
    const host = createSecretlintHost([
      rule('boom', () => {
        throw new Error('x');
      }),
    ]);
    expect(host.scan('anything').failed).toBe(true);
  });

  it('a rule that answers with a promise marks the scan failed, and its rejection is handled', async () => {
    const host = createSecretlintHost([rule('later', () => Promise.reject(new Error('late')))]);
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown) => unhandled.push(e);
    process.on('unhandledRejection', onUnhandled);
    try {
      expect(host.scan('anything').failed).toBe(true);
      await new Promise((r) => setTimeout(r, 20));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it("ignores are dropped, reports kept, and one scan does not see another's reports", () => {
    const host = createSecretlintHost([
      rule('finder', (source, report) => {
        const i = source.content.indexOf('SECRET');
        if (i >= 0) report([i, i + 6]);
      }),
      rule('silencer', (_source, _report, ignore) => ignore()),
    ]);
    expect(host.scan('a SECRET b')).toEqual({ reports: [{ rule: 'finder', range: [2, 8] }], failed: false });
    expect(host.scan('nothing here')).toEqual({ reports: [], failed: false });
  });
});
