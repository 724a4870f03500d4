import type { Figure } from '../bench-types.js';

export interface SuiteResult {
  readonly name: string;
  readonly about?: string;
  readonly seconds: number;
  readonly figures: Figure[];
  readonly error?: string;
}

export type Verdict = 'holds' | 'over budget' | 'not met yet' | 'FAIL (wide)' | '—' | 'error';

/**
 * The wide margin, defined once: a ratio breaks its budget widely when it is over twice a `max` budget (for
 * `max: 0`, any excess) or under half a `min` budget. A full run reports every break; CI's short run (smaller
 * samples, a shared machine) fails only on a wide one.
 */
export function breaksWidely(f: Figure): boolean {
  if (!f.budget) return false;
  // a budget not met yet: CI guards today's level (its `ci` limit) instead
  const ci = f.budget.notMet?.ci;
  if (ci) return 'max' in ci ? f.ratio > ci.max : f.ratio < ci.min;
  return 'max' in f.budget ? f.ratio > 2 * f.budget.max : f.ratio < f.budget.min / 2;
}

export function holds(f: Figure): boolean {
  if (!f.budget) return true;
  return 'max' in f.budget ? f.ratio <= f.budget.max : f.ratio >= f.budget.min;
}

export function verdictOf(f: Figure, short: boolean): Verdict {
  if (!f.budget) return '—';
  if (holds(f)) return 'holds';
  if (short && breaksWidely(f)) return 'FAIL (wide)';
  return f.budget.notMet ? 'not met yet' : 'over budget';
}

const BEGIN = '<!-- bench:begin -->';
const END = '<!-- bench:end -->';

/** `text` with what lies between the bench markers replaced by `block`; the markers must be there, once each. */
export function replaceBetweenMarkers(text: string, block: string): string {
  const a = text.indexOf(BEGIN);
  const b = text.indexOf(END);
  if (a < 0 || b < a || text.indexOf(BEGIN, a + 1) >= 0) throw new Error(`docs/performance.md needs exactly one ${BEGIN} … ${END} pair`);
  return `${text.slice(0, a + BEGIN.length)}\n${block.trimEnd()}\n${text.slice(b)}`;
}

interface Doc {
  readonly finished_at: string;
  readonly machine: Record<string, unknown>;
  readonly load_average: { before: number[]; after: number[] };
  readonly suites: readonly SuiteResult[];
}

const cell = (s: string) => s.replace(/\|/g, '\\|');
const budgetText = (f: Figure) => (!f.budget ? '' : 'max' in f.budget ? `≤ ${f.budget.max}` : `≥ ${f.budget.min}`);
const measureText = (m?: { value: number; unit: string; p95?: number }) => (m ? `${m.value} ${m.unit}` : '');

/** One phase of a per-hook profile (a figure's `detail.phases`). */
interface Phase {
  readonly phase: string;
  readonly ms: number;
  readonly share: number;
}

/** The Performance table of docs/performance.md (and the per-hook profile table, when a figure carries `detail.phases`). */
export function renderReadmeBlock(doc: Doc): string {
  const m = doc.machine;
  const lines = [
    `Full run of ${doc.finished_at.slice(0, 10)} on \`${String(m.host)}\` (${String(m.cpus)}, Node ${String(m.node)}; load average ${doc.load_average.before[0]} before, ${doc.load_average.after[0]} after); commit ${String(m.commit)}.`,
    '',
    '| figure | measured | yardstick (same run) | ratio | budget | verdict |',
    '| --- | --- | --- | --- | --- | --- |',
  ];
  const profiles: { label: string; phases: Phase[] }[] = [];
  for (const s of doc.suites) {
    if (s.error) lines.push(`| ${s.name} | suite failed: ${cell(s.error.slice(0, 100))} | | | | error |`);
    for (const f of s.figures) {
      const y = f.yardstick ? `${cell(f.yardstick.label)}: ${measureText(f.yardstick.measure)}` : '';
      lines.push(`| ${cell(f.label)} | ${measureText(f.measure)} | ${y} | ${f.ratio} | ${budgetText(f)} | ${verdictOf(f, false)} |`);
      const phases = f.detail?.phases as Phase[] | undefined;
      if (Array.isArray(phases)) profiles.push({ label: f.label, phases });
    }
  }
  const notMet = doc.suites.flatMap((s) => s.figures).filter((f) => f.budget?.notMet && !holds(f));
  if (notMet.length) lines.push('', 'Budgets not met yet, and why:', '', ...notMet.map((f) => `- ${f.label}: ${f.budget!.notMet!.why}`));
  for (const p of profiles) {
    lines.push('', `${p.label}, by phase (shares of the whole):`, '', '| phase | ms | share |', '| --- | --- | --- |');
    for (const ph of p.phases) lines.push(`| ${cell(ph.phase)} | ${ph.ms} | ${(ph.share * 100).toFixed(1)} % |`);
  }
  return lines.join('\n');
}
