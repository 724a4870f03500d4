import { afterEach, describe, expect, it, vi } from 'vitest';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { playHistory, type HistoryRun, type SinkName } from '../support/history-run.js';
import { ROOT } from '../support/paths.js';

/**
 * Stamping is a stage and events are immutable: the same hooks give the same
 * JSONL history, byte for byte, the same spans, the same events to a sink that
 * serializes at once, and the same snapshot, whatever order the sinks were
 * added to the bus in (all 24 orders of history, mirror, memory, snapshot).
 */
const RAW = path.join(ROOT, 'fixtures', 'hermes-recorded-0.19.0', 'raw');
// runs, tools, an approval denied, a clarify card, a subagent, a failed model call, a resumed session
const SCENARIOS = ['tty-approval-deny-new-exit', 'tty-clarify', 'tty-subagent', 'oneshot-api-error-400', 'chat-q-multiturn-resume'];
const HOOKS = SCENARIOS.flatMap((s) =>
  readFileSync(path.join(RAW, `${s}.jsonl`), 'utf8')
    .split('\n')
    .filter(Boolean),
);

function permutations<T>(xs: readonly T[]): T[][] {
  if (xs.length <= 1) return [xs.slice()];
  return xs.flatMap((x, i) => permutations([...xs.slice(0, i), ...xs.slice(i + 1)]).map((rest) => [x, ...rest]));
}

const ORDERS = permutations<SinkName>(['history', 'mirror', 'memory', 'snapshot']);

afterEach(() => {
  vi.useRealTimers();
});

describe('sink order', () => {
  let first: HistoryRun;

  it('covers every order', () => {
    expect(ORDERS).toHaveLength(24);
    expect(new Set(ORDERS.map((o) => o.join())).size).toBe(24);
  });

  it.each(ORDERS.map((o) => [o.join(' → '), o] as const))('%s: the same history, spans, events and snapshot', async (_name, order) => {
    const run = await playHistory(HOOKS, order);
    // every sink was handed frozen events
    expect(run.unfrozen).toBe(0);
    // the memory sink saw the stamped events exactly as the history wrote them, whatever its place
    const written = [...run.files]
      .filter(([rel]) => rel.startsWith('hermes/'))
      .flatMap(([, bytes]) => bytes.split('\n').filter(Boolean))
      .sort();
    expect([...run.memory!].sort()).toEqual(written);
    if (!first) {
      first = run;
      // not vacuous: stamped events, spans, a snapshot with span state
      expect(written.filter((l) => l.includes('"traceparent":"00-')).length).toBeGreaterThan(40);
      expect(run.files.get('spans.jsonl')!.split('\n').filter(Boolean).length).toBeGreaterThan(15);
      expect(Object.keys(run.snapshot!.offsets).length).toBeGreaterThan(0);
      expect(run.snapshot!.mirror).toBeTruthy();
      return;
    }
    expect([...run.files.keys()]).toEqual([...first.files.keys()]);
    for (const [rel, bytes] of first.files) expect(run.files.get(rel), rel).toBe(bytes);
    expect(run.memory).toEqual(first.memory);
    expect(run.snapshot).toEqual(first.snapshot);
  });
});
