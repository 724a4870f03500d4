import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AepEvent } from '../../../src/aep/event.js';
import { MAX_OPEN_FILES } from '../../../src/history/handle-pool.js';
import { JsonlHistorySink } from '../../../src/history/jsonl-history-sink.js';
import type { WriteOutcome } from '../../../src/bus/durable-log.js';
import { FaultyDisk } from '../../support/faulty-fs.js';
import { tempDir, waitFor } from '../../support/processes.js';
import { recordingLog } from './recording-log.js';

let n = 0;
const ev = (session: string, pad = 0): AepEvent => ({
  aep: '0.1',
  id: `e${n++}`,
  type: 'x.hermes.test',
  time: '2026-01-01T00:00:00.000Z',
  source: 's',
  agent: 'hermes',
  session,
  seq: n,
  epoch: 0,
  severity: 'info',
  capture: 'metadata',
  data: { pad: 'p'.repeat(pad) },
});

const read = (root: string, session: string) => readFileSync(path.join(root, 'hermes', `${session}.jsonl`), 'utf8');
const ids = (text: string) =>
  text
    .split('\n')
    .filter(Boolean)
    .map((l) => (JSON.parse(l) as { id: string }).id);

describe('JSONL history sink: group commit', () => {
  it('settles each write only once its lines are in the file, in call order', async () => {
    const root = tempDir();
    const sink = new JsonlHistorySink(root, 1000);
    const a = ev('s1');
    expect(await sink.write([a])).toEqual({ written: 1, retained: 0, lost: 0 });
    expect(ids(read(root, 's1'))).toEqual([a.id]);
    await sink.shutdown();
  });

  it('hooks arriving while a write is in flight share the next write', async () => {
    const root = tempDir();
    const sink = new JsonlHistorySink(root, 1000);
    const batches = Array.from({ length: 50 }, () => [ev('s1'), ev('s1')]);
    const outcomes = await Promise.all(batches.map((b) => sink.write(b)));
    expect(outcomes.every((o) => o.written === 2 && o.retained === 0 && o.lost === 0)).toBe(true);
    expect(ids(read(root, 's1'))).toEqual(batches.flat().map((e) => e.id));
    // the first write went alone (the file had to be opened first, so maybe not even that): far fewer writes than hooks
    expect(sink.stats().groups).toBeLessThanOrEqual(2);
    await sink.shutdown();
  });

  it('AEP_FSYNC_INTERVAL_MS=0: every group is fdatasynced before it settles', async () => {
    const root = tempDir();
    const sink = new JsonlHistorySink(root, 1000, { fsyncIntervalMs: 0 });
    for (let i = 0; i < 5; i++) await sink.write([ev('s1')]);
    expect(sink.stats()).toMatchObject({ groups: 5, fsync_interval_ms: 0 });
    expect(sink.stats().fsyncs).toBeGreaterThanOrEqual(5);
    await sink.shutdown();
  });

  it('periodic fdatasync: written files are synced within the interval', async () => {
    const root = tempDir();
    const sink = new JsonlHistorySink(root, 1000, { fsyncIntervalMs: 30 });
    await sink.write([ev('s1')]);
    expect(sink.stats().fsyncs).toBe(0);
    await waitFor('periodic fsync', () => ((sink.stats().fsyncs as number) >= 1 ? true : undefined), 5_000);
    await sink.shutdown();
  });

  it.each([
    ['lines', 2, {}, [ev('s1'), ev('s1')]],
    ['bytes', 1000, { maxBytes: 1024 }, [ev('s1', 2000)]],
  ] as const)(
    'a full queue (%s) refuses new hooks, and takes them again once written (nothing is dropped after acceptance)',
    async (_, queueMax, opts, batch) => {
      const root = tempDir();
      const sink = new JsonlHistorySink(root, queueMax, opts);
      expect(sink.refusal()).toBeUndefined();
      const p = sink.write(batch);
      expect(sink.refusal()).toBe('queue full');
      await p;
      expect(sink.refusal()).toBeUndefined();
      expect(sink.stats()).toMatchObject({ refused: 1, dropped: 0, written: batch.length, queued: 0, queued_bytes: 0 });
      await sink.shutdown();
    },
  );

  it('a file found ending in a torn line is cut back to its last complete line before the next write', async () => {
    const root = tempDir();
    mkdirSync(path.join(root, 'hermes'));
    writeFileSync(path.join(root, 'hermes', 's1.jsonl'), '{"id":"old"}\n{"id":"torn');
    const { log, lines } = recordingLog();
    const sink = new JsonlHistorySink(root, 100, { log });
    const a = ev('s1');
    await sink.write([a]);
    expect(read(root, 's1')).toBe(`{"id":"old"}\n${JSON.stringify(a)}\n`);
    expect(sink.stats().repaired_tails).toBe(1);
    expect(lines.filter((l) => l.level === 'warn')).toHaveLength(1);
    await sink.shutdown();
  });

  it('more session files than handles: all written, in order, handles bounded', async () => {
    const root = tempDir();
    const sink = new JsonlHistorySink(root, 100_000);
    const sessions = Array.from({ length: 300 }, (_, i) => `s${i}`);
    const sent = new Map<string, string[]>(sessions.map((s) => [s, []]));
    for (let round = 0; round < 3; round++) {
      await Promise.all(
        sessions.map((s) => {
          const e = ev(s);
          sent.get(s)!.push(e.id);
          return sink.write([e]);
        }),
      );
    }
    expect(sink.stats().open_files).toBeLessThanOrEqual(256);
    await sink.shutdown();
    for (const s of sessions) expect(ids(read(root, s))).toEqual(sent.get(s));
  });
});

describe('JSONL history sink: a full or failing disk', () => {
  it('a short write is cut back to the last whole hook; the hook is retained and written first once space returns', async () => {
    const root = tempDir();
    const disk = new FaultyDisk();
    const { log, lines } = recordingLog();
    const sink = new JsonlHistorySink(root, 1000, { open: disk.open, log, probeIntervalMs: 10 });
    const first = ev('s1', 100);
    await sink.write([first]);
    disk.remaining = 150; // the next hook (two lines of ~250 bytes) lands half
    const torn = [ev('s1', 100), ev('s1', 100)];
    const out = await sink.write(torn);
    expect(out).toMatchObject({ written: 0, retained: 2, lost: 0, reason: 'write failed: ENOSPC' });
    // cut back: the file ends in a complete line, the half hook is gone
    expect(read(root, 's1')).toBe(`${JSON.stringify(first)}\n`);
    // degraded, refusing, one line on stderr
    expect(sink.refusal()).toBe('write failed: ENOSPC');
    expect(sink.health()).toMatchObject({ sink: 'log', reason: 'write failed: ENOSPC' });
    expect(sink.stats()).toMatchObject({ retained: 2, queued: 2 });
    expect(lines.filter((l) => l.level === 'error')).toHaveLength(1);
    // a caller that ignores the refusal: held behind the retained lines, never ahead of them
    const ignored = ev('s1');
    expect(await sink.write([ignored])).toMatchObject({ written: 0, retained: 1 });
    expect(lines.filter((l) => l.level === 'error')).toHaveLength(1);
    // space comes back: the probe notices, one recovery line, retained lines first, then new hooks
    disk.remaining = Number.POSITIVE_INFINITY;
    expect(await out.final).toEqual({ written: 2, lost: 0 });
    await waitFor('probe recovery', () => (sink.refusal() === undefined ? true : undefined), 5_000);
    expect(sink.health()).toBeUndefined();
    expect(lines.filter((l) => l.level === 'info')).toEqual([expect.objectContaining({ msg: 'the event log is writable again', sink: 'log' })]);
    const after = ev('s1');
    expect(await sink.write([after])).toEqual({ written: 1, retained: 0, lost: 0 });
    expect(ids(read(root, 's1'))).toEqual([first, ...torn, ignored, after].map((e) => e.id));
    expect(sink.stats()).toMatchObject({ written: 5, retained: 0, queued: 0, dropped: 0 });
    await sink.shutdown();
  });

  it('within one group, the hooks that landed whole are answered written, the rest retained, in order', async () => {
    const root = tempDir();
    const disk = new FaultyDisk();
    const sink = new JsonlHistorySink(root, 1000, { open: disk.open, probeIntervalMs: 10 });
    const opener = ev('s1');
    await sink.write([opener]); // opened: the next writes group
    const hooks = Array.from({ length: 10 }, () => [ev('s1', 50)]);
    const one = Buffer.byteLength(`${JSON.stringify(hooks[0]![0])}\n`);
    // one write in flight so the ten queue behind it as one group; room for it and 3.5 of them
    const blocker = ev('s1');
    disk.remaining = Buffer.byteLength(`${JSON.stringify(blocker)}\n`) + Math.floor(one * 3.5);
    const first = sink.write([blocker]);
    const outs = hooks.map((h) => sink.write(h));
    expect(await first).toEqual({ written: 1, retained: 0, lost: 0 });
    const settled = await Promise.all(outs);
    expect(settled.map((o) => o.written)).toEqual([1, 1, 1, 0, 0, 0, 0, 0, 0, 0]);
    expect(settled.slice(3).every((o) => o.retained === 1)).toBe(true);
    let text = read(root, 's1');
    expect(text.endsWith('\n')).toBe(true);
    expect(ids(text)).toEqual([opener, blocker, ...hooks.slice(0, 3).flat()].map((e) => e.id));
    disk.remaining = Number.POSITIVE_INFINITY;
    const finals = settled.slice(3).flatMap((o) => (o.final ? [o.final] : []));
    expect(finals).toHaveLength(7);
    expect(await Promise.all(finals)).toEqual(finals.map(() => ({ written: 1, lost: 0 })));
    text = read(root, 's1');
    expect(ids(text)).toEqual([opener, blocker, ...hooks.flat()].map((e) => e.id));
    await sink.shutdown();
  });

  it('an unopenable log file: retained, degraded with the reason, written once it opens', async () => {
    const root = tempDir();
    const disk = new FaultyDisk();
    disk.failOpen = 'EACCES';
    const sink = new JsonlHistorySink(root, 1000, { open: disk.open, probeIntervalMs: 10 });
    const a = ev('s1');
    const out = await sink.write([a]);
    expect(out).toMatchObject({ written: 0, retained: 1, lost: 0, reason: 'open failed: EACCES' });
    expect(sink.health()).toMatchObject({ sink: 'log', reason: 'open failed: EACCES' });
    disk.failOpen = undefined;
    expect(await out.final).toEqual({ written: 1, lost: 0 });
    expect(ids(read(root, 's1'))).toEqual([a.id]);
    await waitFor('recovery', () => (sink.health() === undefined ? true : undefined), 5_000);
    await sink.shutdown();
  });

  it('start(): an unwritable log dir is degraded before the first hook, and recovers by itself', async () => {
    const root = tempDir();
    const disk = new FaultyDisk();
    disk.failOpen = 'EROFS';
    const { log, lines } = recordingLog();
    const sink = new JsonlHistorySink(root, 1000, { open: disk.open, log, probeIntervalMs: 10 });
    await sink.start();
    expect(sink.health()).toMatchObject({ sink: 'log', reason: 'write failed: EROFS' });
    expect(sink.refusal()).toBe('write failed: EROFS');
    expect(lines.filter((l) => l.level === 'error')).toHaveLength(1);
    disk.failOpen = undefined;
    await waitFor('recovery', () => (sink.health() === undefined ? true : undefined), 5_000);
    expect(lines.filter((l) => l.level === 'info')).toHaveLength(1);
    expect(readdirSync(path.join(root, 'hermes'))).toEqual([]);
    await sink.shutdown();
  });

  it('a file that never takes writes: its lines are given up after MAX_ATTEMPTS and counted; the others flow', async () => {
    const root = tempDir();
    const disk = new FaultyDisk();
    disk.failWrites = { path: /bad\.jsonl$/, code: 'EIO' };
    const sink = new JsonlHistorySink(root, 1000, { open: disk.open, probeIntervalMs: 5 });
    const out = await sink.write([ev('bad')]);
    expect(out.retained).toBe(1);
    expect(await out.final).toEqual({ written: 0, lost: 1 });
    expect(sink.stats()).toMatchObject({ dropped: 1, retained: 0, queued: 0, last_error: 'EIO' });
    await waitFor('recovery', () => (sink.refusal() === undefined ? true : undefined), 5_000);
    expect(await sink.write([ev('good')])).toEqual({ written: 1, retained: 0, lost: 0 });
    await sink.shutdown();
  });

  it('shutdown with the disk still full: retained lines get one last attempt, then are dropped and counted', async () => {
    const root = tempDir();
    const disk = new FaultyDisk();
    const sink = new JsonlHistorySink(root, 1000, { open: disk.open, probeIntervalMs: 3_600_000 });
    await sink.write([ev('s1')]);
    disk.remaining = 0;
    const out = await sink.write([ev('s1')]);
    expect(out.retained).toBe(1);
    await sink.shutdown();
    expect(await out.final).toEqual({ written: 0, lost: 1 });
    expect(sink.stats()).toMatchObject({ written: 1, dropped: 1, retained: 0, queued: 0 });
  });

  it('property: whatever the disk does, every file is whole lines and holds exactly the hooks finally written, in order', async () => {
    const step = fc.record({
      budget: fc.oneof(fc.constant(Number.POSITIVE_INFINITY), fc.integer({ min: 0, max: 3000 })),
      hooks: fc.array(fc.record({ session: fc.constantFrom('a', 'b'), events: fc.integer({ min: 1, max: 3 }), pad: fc.integer({ min: 0, max: 400 }) }), {
        minLength: 1,
        maxLength: 12,
      }),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 8 }), fc.boolean(), async (steps, probe) => {
        const root = tempDir();
        const disk = new FaultyDisk();
        // with or without the probe resuming between steps; the writes bypass `refusal` on purpose
        const sink = new JsonlHistorySink(root, 100_000, { open: disk.open, probeIntervalMs: probe ? 2 : 3_600_000 });
        const sent: { events: AepEvent[]; out: WriteOutcome }[] = [];
        for (const s of steps) {
          disk.remaining = s.budget;
          const batch = s.hooks.map((h) => Array.from({ length: h.events }, () => ev(h.session, h.pad)));
          const outs = await Promise.all(batch.map((evs) => sink.write(evs)));
          outs.forEach((out, i) => {
            // all or nothing per hook, and every hook is answered
            expect(out.written + out.retained + out.lost).toBe(batch[i]!.length);
            expect([0, batch[i]!.length]).toContain(out.written);
            sent.push({ events: batch[i]!, out });
          });
        }
        await sink.shutdown();
        const expected = new Map<string, string[]>([
          ['a', []],
          ['b', []],
        ]);
        for (const { events, out } of sent) {
          const final = out.final ? await out.final : { written: out.written, lost: out.lost };
          expect([0, events.length]).toContain(final.written);
          if (final.written > 0) expected.get(events[0]!.session)!.push(...events.map((e) => e.id));
        }
        const st = sink.stats();
        expect((st.written as number) + (st.dropped as number)).toBe(sent.reduce((n, x) => n + x.events.length, 0));
        expect(st).toMatchObject({ queued: 0, retained: 0 });
        for (const [session, want] of expected) {
          let text = '';
          try {
            text = read(root, session);
          } catch {
            /* never created: nothing was written */
          }
          expect(text === '' || text.endsWith('\n')).toBe(true);
          expect(ids(text)).toEqual(want);
        }
      }),
      { numRuns: 60 },
    );
  });
});

/** An `open` that counts the handles it gave out and which of them are closed, and what was synced before closing. */
function countingOpen() {
  const live = new Set<string>();
  const closedUnsynced: string[] = [];
  let opened = 0;
  const openFn = (async (file: string, flags?: string, mode?: number) => {
    const h = await open(file, flags, mode);
    const id = `${file}#${opened++}`;
    live.add(id);
    let dirty = false;
    return new Proxy(h, {
      get: (target, prop) => {
        if (prop === 'write')
          return async (...a: Parameters<FileHandle['write']>) => {
            dirty = true;
            return target.write(...a);
          };
        if (prop === 'datasync')
          return async () => {
            await target.datasync();
            dirty = false;
          };
        if (prop === 'close')
          return async () => {
            if (dirty && file.endsWith('.jsonl')) closedUnsynced.push(file);
            live.delete(id);
            return target.close();
          };
        const v: unknown = Reflect.get(target, prop);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
  }) as typeof open;
  return { openFn, live, closedUnsynced, opened: () => opened };
}

describe('JSONL history sink: open handles', () => {
  it('past MAX_OPEN_FILES the least recently WRITTEN handle is closed (fdatasynced first), and reopened when written again', async () => {
    const root = tempDir();
    const fs = countingOpen();
    // no periodic fsync within the test: only an eviction syncs
    const sink = new JsonlHistorySink(root, 100_000, { open: fs.openFn, fsyncIntervalMs: 3_600_000 });
    const sessions = Array.from({ length: MAX_OPEN_FILES + 44 }, (_, i) => `s${i}`);
    for (const s of sessions) await sink.write([ev(s)]);
    // the first 44 were evicted when the last 44 opened: closed, after their lines were synced
    await waitFor('evicted handles closed', () => (fs.live.size === MAX_OPEN_FILES ? true : undefined), 5_000);
    expect(sink.stats().open_files).toBe(MAX_OPEN_FILES);
    expect(fs.closedUnsynced).toEqual([]);
    expect(sink.stats().fsyncs).toBeGreaterThanOrEqual(44);
    // a write refreshes: s44, the least recently written, is written again, so a new file evicts s45 instead
    const opened = fs.opened();
    await sink.write([ev('s44')]);
    expect(fs.opened()).toBe(opened);
    await sink.write([ev('new')]);
    expect(fs.opened()).toBe(opened + 1);
    await sink.write([ev('s44')]);
    expect(fs.opened()).toBe(opened + 1);
    await sink.write([ev('s45')]);
    expect(fs.opened()).toBe(opened + 2);
    // an evicted file written again is reopened and appended to
    await sink.write([ev('s0')]);
    expect(fs.opened()).toBe(opened + 3);
    await sink.shutdown();
    expect(fs.live.size).toBe(0);
    expect(fs.closedUnsynced).toEqual([]);
    expect(ids(read(root, 's0'))).toHaveLength(2);
  });

  it('a handle evicted while its file is being written is closed between groups, and nothing is lost or reordered', async () => {
    const root = tempDir();
    const fs = countingOpen();
    const sink = new JsonlHistorySink(root, 1_000_000, { open: fs.openFn, fsyncIntervalMs: 3_600_000 });
    const sessions = Array.from({ length: MAX_OPEN_FILES * 2 }, (_, i) => `s${i}`);
    const sent = new Map<string, string[]>(sessions.map((s) => [s, []]));
    // every file busy at once, several rounds deep: evictions hit files whose loops are running
    const writes: Promise<WriteOutcome>[] = [];
    for (let round = 0; round < 4; round++) {
      for (const s of sessions) {
        const e = ev(s);
        sent.get(s)!.push(e.id);
        writes.push(sink.write([e]));
      }
    }
    expect((await Promise.all(writes)).every((o) => o.written === 1)).toBe(true);
    await waitFor('handles back under the bound', () => (fs.live.size <= MAX_OPEN_FILES ? true : undefined), 5_000);
    expect(sink.stats().open_files).toBeLessThanOrEqual(MAX_OPEN_FILES);
    await sink.shutdown();
    expect(fs.live.size).toBe(0);
    expect(fs.closedUnsynced).toEqual([]);
    for (const s of sessions) expect(ids(read(root, s))).toEqual(sent.get(s));
  });
});

describe('JSONL history sink: bounds and flush', () => {
  it('a backlog over 8 MiB goes in more than one group write, in order', async () => {
    const root = tempDir();
    const sink = new JsonlHistorySink(root, 1000);
    const opener = ev('s1');
    const first = sink.write([opener]); // the file opens meanwhile: all of it queues as one 12 MiB backlog
    const big = Array.from({ length: 6 }, () => [ev('s1', 2 * 1024 * 1024)]);
    await Promise.all([first, ...big.map((b) => sink.write(b))]);
    expect(sink.stats().groups).toBeGreaterThanOrEqual(2);
    expect(ids(read(root, 's1'))).toEqual([opener, ...big.flat()].map((e) => e.id));
    await sink.shutdown();
  });

  it('flush waits for every write loop, those started while it waits included, and for their fdatasync', async () => {
    const root = tempDir();
    const sink = new JsonlHistorySink(root, 1000, { fsyncIntervalMs: 3_600_000 });
    const a = ev('a');
    void sink.write([a]);
    const flushed = sink.flush();
    const b = ev('b');
    void sink.write([b]); // a loop that starts after the flush was asked for
    await flushed;
    expect(ids(read(root, 'a'))).toEqual([a.id]);
    expect(ids(read(root, 'b'))).toEqual([b.id]);
    expect(sink.stats()).toMatchObject({ queued: 0, written: 2 });
    expect(sink.stats().fsyncs).toBeGreaterThanOrEqual(2);
    await sink.shutdown();
  });
});
