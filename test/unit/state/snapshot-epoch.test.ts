import { describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { tempDir } from '../../support/processes.js';
import { soakSchedule } from '../../support/soak-history.js';
import { openWorld } from '../../support/snapshot-world.js';

/**
 * The start-up restore reports the highest epoch the history it read shows
 * (the snapshot's own epoch included): the daemon's next epoch must be past
 * it, whatever the state dir's epoch file says.
 */
async function writtenAt(epoch: number) {
  const now = Date.now();
  const h = soakSchedule(6, now, 10 * 60_000, 60_000, 150);
  const root = tempDir();
  let clock = now - 10 * 60_000;
  const a = await openWorld({ root, epoch, idPrefix: 'A', now: () => clock, mirror: false });
  for (const { t, s, k } of h.timeline) {
    clock = t;
    a.feed([h.sessions[s]!.hooks[k]!], () => t);
  }
  await a.close();
  return { root, clock };
}

describe('restore: the highest epoch in the history', () => {
  it('a full replay (no snapshot: the state dir lost) reports the epoch the events were written in', async () => {
    const { root, clock } = await writtenAt(3);
    rmSync(path.join(root, 'state'), { recursive: true, force: true });
    const b = await openWorld({ root, epoch: 0, idPrefix: 'B', now: () => clock, mirror: false });
    expect(b.restored.from).toBe('replay');
    expect(b.restored.replay.events).toBeGreaterThan(0);
    expect(b.restored.highestEpoch).toBe(3);
  });

  it('a snapshot restore reports at least the epoch of the process that wrote the snapshot', async () => {
    const { root, clock } = await writtenAt(5);
    const b = await openWorld({ root, epoch: 0, idPrefix: 'B', now: () => clock, mirror: false });
    expect(b.restored.from).toBe('snapshot');
    expect(b.restored.highestEpoch).toBe(5);
  });

  it('an empty history shows no epoch (-1)', async () => {
    const b = await openWorld({ root: tempDir(), epoch: 0, idPrefix: 'B', now: () => 0, mirror: false });
    expect(b.restored.highestEpoch).toBe(-1);
  });
});
