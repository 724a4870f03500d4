import { readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DeliveryLedger } from '../../../../src/transport/webhook/delivery-ledger.js';
import { tempDir } from '../../../support/processes.js';

const WINDOW = 300_000;
const id = (n: number) => n.toString(16).padStart(32, '0');

describe('the delivery ledger (dedupe of accepted webhook deliveries)', () => {
  it('remembers accepted ids across a reload (a restart), in a private file', async () => {
    const file = path.join(tempDir(), 'webhook-deliveries');
    let now = 1_000_000;
    const a = new DeliveryLedger({ file, windowMs: WINDOW, now: () => now });
    await a.load();
    await a.add(id(1), now);
    await a.add(id(2), now);
    await a.close();
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const b = new DeliveryLedger({ file, windowMs: WINDOW, now: () => now });
    await b.load();
    expect([b.has(id(1)), b.has(id(2)), b.has(id(3))]).toEqual([true, true, false]);
    // past the window an id is no longer needed (a replay of it is refused as stale), nor kept by a reload
    now += WINDOW + 1;
    expect(b.has(id(1))).toBe(false);
    await b.close();
    const c = new DeliveryLedger({ file, windowMs: WINDOW, now: () => now });
    await c.load();
    expect(c.size).toBe(0);
    expect(readFileSync(file, 'utf8')).toBe('');
  });

  it('skips torn or foreign lines when read back, counting them', async () => {
    const file = path.join(tempDir(), 'webhook-deliveries');
    writeFileSync(file, `1000 ${id(1)}\nnot a line\n1000 ${id(2)}\n99 a b\n1000 ${id(3)}`, { mode: 0o600 });
    const l = new DeliveryLedger({ file, windowMs: WINDOW, now: () => 1000 });
    await l.load();
    expect([l.size, l.skipped, l.has(id(3))]).toEqual([3, 2, true]);
  });

  it('is bounded: past the cap the oldest ids go (counted), the file is rewritten to at most twice the cap (fast-check)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 20 }), fc.integer({ min: 0, max: 80 }), async (cap, n) => {
        const file = path.join(tempDir(), 'webhook-deliveries');
        const l = new DeliveryLedger({ file, windowMs: WINDOW, cap, now: () => 5000 });
        await l.load();
        for (let i = 0; i < n; i++) await l.add(id(i), 5000);
        await l.close();
        expect(l.size).toBe(Math.min(cap, n));
        expect(l.evicted).toBe(Math.max(0, n - cap));
        // the newest `cap` are kept, the older ones are not
        for (let i = 0; i < n; i++) expect([i, l.has(id(i))]).toEqual([i, i >= n - cap]);
        const lines = n === 0 ? 0 : readFileSync(file, 'utf8').split('\n').length - 1;
        expect(lines).toBeLessThanOrEqual(2 * cap);
        const back = new DeliveryLedger({ file, windowMs: WINDOW, cap, now: () => 5000 });
        await back.load();
        for (let i = 0; i < n; i++) expect([i, back.has(id(i))]).toEqual([i, i >= n - cap]);
      }),
      { numRuns: 25 },
    );
  });
});
