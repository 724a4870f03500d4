import { describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { FAMILIES, GUARDRAIL, X_HERMES, X_HERMES_PREFIX, familyOf, isOpening, isTerminal, type Family } from '../../../src/aep/lifecycle.js';
import { ROOT } from '../../support/paths.js';

const TABLE = [...Object.values(FAMILIES).flatMap((f) => [...f.opening, ...f.steps, ...f.terminal]), GUARDRAIL, ...Object.values(X_HERMES)];

/** Every `.jsonl` file below `dir`. */
function jsonl(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = path.join(dir, d.name);
    return d.isDirectory() ? jsonl(p) : d.name.endsWith('.jsonl') ? [p] : [];
  });
}

describe('the AEP lifecycle table', () => {
  it('names each type once, with its payload schema', () => {
    expect(new Set(TABLE).size).toBe(TABLE.length);
    for (const t of TABLE) {
      const dir = t.startsWith(X_HERMES_PREFIX) ? 'x-hermes' : 'types';
      expect(existsSync(path.join(ROOT, 'schemas', dir, `${t}.schema.json`)), t).toBe(true);
    }
  });

  it('gives every family one opening and at least one terminal, and every type one role', () => {
    for (const [family, f] of Object.entries(FAMILIES) as [Family, (typeof FAMILIES)[Family]][]) {
      expect(f.opening).toHaveLength(1);
      expect(f.terminal.length).toBeGreaterThan(0);
      for (const t of [...f.opening, ...f.steps, ...f.terminal]) expect(familyOf(t)).toBe(family);
      for (const t of f.opening) expect([isOpening(t), isTerminal(t)]).toEqual([true, false]);
      for (const t of f.terminal) expect([isOpening(t), isTerminal(t)]).toEqual([false, true]);
    }
    expect(familyOf(X_HERMES.apiError)).toBeUndefined();
  });

  it('covers every type in the golden history (else an x.hermes fallback for an unknown hook)', () => {
    const types = new Set<string>();
    for (const f of jsonl(path.join(ROOT, 'fixtures', 'golden-history'))) {
      if (path.basename(f) === 'spans.jsonl') continue;
      for (const line of readFileSync(f, 'utf8').split('\n').filter(Boolean)) types.add((JSON.parse(line) as { type: string }).type);
    }
    expect(types.size).toBeGreaterThan(10);
    for (const t of types) expect((TABLE as readonly string[]).includes(t) || t.startsWith(X_HERMES_PREFIX), t).toBe(true);
  });
});
