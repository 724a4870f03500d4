import { describe, expect, it } from 'vitest';
import type { Budget, Figure } from '../../bench/bench-types.js';
import { breaksWidely, renderReadmeBlock, replaceBetweenMarkers, verdictOf } from '../../bench/support/report.js';

const fig = (ratio: number, budget?: Budget): Figure => ({
  id: 'x',
  label: 'x figure',
  measure: { value: ratio, unit: 'u' },
  ratio,
  ...(budget ? { budget } : {}),
});

describe('bench verdicts', () => {
  it('a max budget holds at its limit, is over it above, and breaks widely only past twice the limit', () => {
    expect(verdictOf(fig(1.3, { max: 1.3 }), true)).toBe('holds');
    expect(verdictOf(fig(1.5, { max: 1.3 }), true)).toBe('over budget');
    expect(verdictOf(fig(2.7, { max: 1.3 }), true)).toBe('FAIL (wide)');
    expect(verdictOf(fig(2.7, { max: 1.3 }), false)).toBe('over budget');
    expect(breaksWidely(fig(0.001, { max: 0 }))).toBe(true);
  });
  it('a min budget breaks widely under half of it', () => {
    expect(verdictOf(fig(0.3, { min: 0.5 }), true)).toBe('over budget');
    expect(verdictOf(fig(0.2, { min: 0.5 }), true)).toBe('FAIL (wide)');
  });
  it('a budget not met yet is guarded at its CI level instead, and the README says why', () => {
    const b: Budget = { min: 0.5, notMet: { why: 'the write the reply waits for', ci: { min: 0.08 } } };
    expect(verdictOf(fig(0.15, b), true)).toBe('not met yet');
    expect(verdictOf(fig(0.07, b), true)).toBe('FAIL (wide)');
    expect(verdictOf(fig(0.6, b), true)).toBe('holds');
    const block = renderReadmeBlock({
      finished_at: '2026-12-01T00:00:00Z',
      machine: { host: 'h', cpus: '2', node: 'v24', commit: 'c' },
      load_average: { before: [0.1], after: [0.2] },
      suites: [{ name: 's', seconds: 1, figures: [fig(0.15, b), fig(0.6, { ...b, min: 0.5 })] }],
    });
    expect(block).toContain('- x figure: the write the reply waits for');
    expect(block.match(/the write the reply waits for/g)).toHaveLength(1);
  });
  it('the README block goes between exactly one pair of markers', () => {
    expect(replaceBetweenMarkers('a\n<!-- bench:begin -->\nold\n<!-- bench:end -->\nb', 'new')).toBe('a\n<!-- bench:begin -->\nnew\n<!-- bench:end -->\nb');
    expect(() => replaceBetweenMarkers('no markers', 'new')).toThrow(/exactly one/);
  });
});
