import { afterEach, describe, expect, it, vi } from 'vitest';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { playHistory, tree } from '../support/history-run.js';
import { ROOT } from '../support/paths.js';

/**
 * The history and the spans the daemon makes of the envelopes the REAL Hermes
 * sent (fixtures/hermes-recorded*), byte for byte, against what the daemon
 * made of them before the core refactor (fixtures/golden-history, recorded
 * from main at 938bdb1 with GOLDEN_UPDATE=1). Clock and ids are fixed; the
 * wiring is the daemon's (test/support/history-run.ts).
 */
const SETS = [
  { version: '0.18.2', dir: path.join(ROOT, 'fixtures', 'hermes-recorded', 'raw') },
  { version: '0.19.0', dir: path.join(ROOT, 'fixtures', 'hermes-recorded-0.19.0', 'raw') },
] as const;
const GOLDEN = path.join(ROOT, 'fixtures', 'golden-history');
const UPDATE = process.env.GOLDEN_UPDATE === '1';

afterEach(() => {
  vi.useRealTimers();
});

/** The golden wiring: the span context stage, then the OTel mirror and the JSONL history on the bus. */
async function play(file: string): Promise<Map<string, string>> {
  const hooks = readFileSync(file, 'utf8').split('\n').filter(Boolean);
  return (await playHistory(hooks, ['mirror', 'history'])).files;
}

describe.each(SETS)('golden history, recorded Hermes $version', ({ version, dir }) => {
  const scenarios = readdirSync(dir)
    .filter((f) => f.endsWith('.jsonl'))
    .sort();

  it.each(scenarios)('%s: history and spans byte-identical to the recorded run', async (scenario) => {
    const got = await play(path.join(dir, scenario));
    const where = path.join(GOLDEN, version, scenario.replace(/\.jsonl$/, ''));
    if (UPDATE) {
      rmSync(where, { recursive: true, force: true });
      for (const [rel, bytes] of got) {
        mkdirSync(path.dirname(path.join(where, rel)), { recursive: true });
        writeFileSync(path.join(where, rel), bytes);
      }
    }
    const want = tree(where);
    expect([...got.keys()]).toEqual([...want.keys()]);
    for (const [rel, bytes] of want) expect(got.get(rel), rel).toBe(bytes);
    // the history is not empty: a refactor that wrote nothing cannot pass
    expect([...want.keys()].some((k) => k.endsWith('.jsonl') && k !== 'spans.jsonl')).toBe(true);
  });
});
