// The attr-match filter tail applies to the JSONL history itself (AEP-0003 §6.1, §6.2),
// pinned by every case of the shipped corpus: matches, non-matches, and fail-closed rejections.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileLocalFilter } from '../../../src/tail/local-filter.js';
import { ROOT } from '../../support/paths.js';

interface Cases {
  match: { name: string; filter: unknown; event: Record<string, unknown>; match: boolean }[];
  invalid: { name: string; filter: unknown }[];
}
const cases = JSON.parse(readFileSync(path.join(ROOT, 'fixtures/aep/attr-match/cases.json'), 'utf8')) as Cases;

describe('tail local filter (AEP-0003 §6.2)', () => {
  it.each(cases.match.map((c) => [c.name, c] as const))('AEP-0003 §6.2 match: %s', (_n, c) => {
    const f = compileLocalFilter(c.filter);
    if ('error' in f) throw new Error(`rejected a valid filter: ${f.error}`);
    expect(f.filter(c.event)).toBe(c.match);
  });

  it.each(cases.invalid.map((c) => [c.name, c] as const))('AEP-0003 §6.2 invalid (fail closed): %s', (_n, c) => {
    expect(compileLocalFilter(c.filter)).toHaveProperty('error');
  });

  it('the corpus is not empty', () => {
    expect(cases.match.length).toBeGreaterThan(5);
    expect(cases.invalid.length).toBeGreaterThan(3);
  });
});
