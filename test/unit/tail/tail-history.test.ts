// When no daemon answers, tail reads the JSONL history (AEP-0003 §3.1) and applies the
// resume point, the filter and the capture ceiling itself; it follows appended lines.
import { appendFileSync, cpSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { plainStyler } from '../../../src/tail/color.js';
import { compileLocalFilter } from '../../../src/tail/local-filter.js';
import type { TailPlan } from '../../../src/tail/options.js';
import { runTail } from '../../../src/tail/tail.js';
import { ROOT } from '../../support/paths.js';
import { tempDir, waitFor } from '../../support/processes.js';

const SCENARIO = path.join(ROOT, 'fixtures/golden-history/0.19.0/tty-approval-once/hermes');
const FILE = readdirSync(SCENARIO).find((n) => n.endsWith('.jsonl'))!;
const SESSION = FILE.replace(/\.jsonl$/, '');
const LINES = readFileSync(path.join(SCENARIO, FILE), 'utf8').split('\n').filter(Boolean);

const stops: AbortController[] = [];
afterEach(() => {
  for (const s of stops.splice(0)) s.abort();
});

function history(): string {
  const root = tempDir();
  cpSync(SCENARIO, path.join(root, 'hermes'), { recursive: true });
  return root;
}

function run(over: Partial<TailPlan> & { filterJson?: unknown }) {
  const f = compileLocalFilter(over.filterJson ?? {});
  if ('error' in f) throw new Error(f.error);
  const p: TailPlan = {
    target: { kind: 'socket', path: path.join(tempDir(), 'none.sock') },
    historyRoot: history(),
    localFilter: f.filter,
    json: true,
    follow: false,
    ...over,
  };
  const out: string[] = [];
  const err: string[] = [];
  const stop = new AbortController();
  stops.push(stop);
  const done = runTail(p, { out: (l) => out.push(l), err: (l) => err.push(l), style: plainStyler }, stop.signal, { rescanMs: 50 });
  return { out, err, stop, done, root: p.historyRoot };
}

describe('tail on the JSONL history (no daemon)', () => {
  it('from all: every line byte-identical, in order, after a notice naming where it reads', async () => {
    const t = run({ from: 'all' });
    await expect(t.done).resolves.toBe(0);
    expect(t.out).toEqual(LINES);
    expect(t.err[0]).toContain('no daemon stream at unix:');
    expect(t.err[0]).toContain(t.root);
  });

  it('from a position: strictly after it', async () => {
    const t = run({ from: [{ session: SESSION, epoch: 1, seq: 6 }] });
    await t.done;
    const after = LINES.filter((l) => (JSON.parse(l) as { seq: number }).seq > 6);
    expect(after.length).toBeGreaterThan(0);
    expect(after.length).toBeLessThan(LINES.length);
    expect(t.out).toEqual(after);
  });

  it('the filter and the capture ceiling are applied: capture none keeps the envelope only', async () => {
    const t = run({ from: 'all', filterJson: { type: 'attention.*' }, capture: 'none' });
    await t.done;
    expect(t.out.length).toBe(LINES.filter((l) => l.includes('"type":"attention.')).length);
    for (const l of t.out) {
      const e = JSON.parse(l) as Record<string, unknown>;
      expect(String(e['type'])).toMatch(/^attention\./);
      expect(e['capture']).toBe('none');
      expect(e).not.toHaveProperty('data');
    }
    expect(t.out.join('\n')).not.toContain('rm -rf');
  });

  it('following: existing lines are not replayed, appended ones are, other lines (spans, another AEP major) are skipped', async () => {
    const t = run({ follow: true, filterJson: { session: SESSION } });
    const file = path.join(t.root, 'hermes', FILE);
    writeFileSync(path.join(t.root, 'spans.jsonl'), '{"name":"a span"}\n');
    const next = { ...(JSON.parse(LINES[LINES.length - 1]!) as Record<string, unknown>), id: 'appended-1', seq: 99 };
    const other = { ...next, id: 'other-1', session: 'another' };
    const future = { ...next, id: 'future-1', aep: '1.0' };
    // appended until seen: the first append may land before the follower has begun at the file's end
    await waitFor(
      'the appended event',
      () => {
        if (!t.out.some((l) => l.includes('appended-1'))) appendFileSync(file, [future, other, next].map((e) => JSON.stringify(e)).join('\n') + '\n');
        return t.out.some((l) => l.includes('appended-1')) || undefined;
      },
      15_000,
      200,
    );
    expect(t.out.every((l) => l.includes('appended-1'))).toBe(true);
    expect(t.out).toHaveLength(1); // dedupe on (source, id): appended again, printed once
    expect(t.out.join('\n')).not.toContain('"seq":1,');
    expect(t.err.filter((l) => l.includes('unsupported AEP version'))).toHaveLength(1);
  });
});
