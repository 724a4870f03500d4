import { readFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_OPEN_FILES, MIN_OPEN_FILES, parseOpenFileLimit, poolBound } from '../../../src/history/fd-limit.js';
import { JsonlHistorySink } from '../../../src/history/jsonl-history-sink.js';
import { tempDir } from '../../support/processes.js';
import { eventMaker } from './sink-events.js';

const ev = eventMaker('b');

const LIMITS = `Limit                     Soft Limit           Hard Limit           Units
Max cpu time              unlimited            unlimited            seconds
Max open files            128                  4096                 files
Max locked memory         8388608              8388608              bytes
`;

/**
 * A process with `limit` descriptors for session logs: real files, and an
 * open past the limit fails EMFILE the way the kernel's does. Records the most
 * handles ever open at once.
 */
function limitedOpen(limit: number) {
  let live = 0;
  let peak = 0;
  let refusedOpens = 0;
  const openFn = (async (file: string, flags?: number, mode?: number) => {
    if (file.endsWith('.jsonl') && live >= limit) {
      refusedOpens++;
      throw Object.assign(new Error('EMFILE: too many open files'), { code: 'EMFILE' });
    }
    const h = await open(file, flags, mode);
    if (!file.endsWith('.jsonl')) return h;
    peak = Math.max(peak, ++live);
    return new Proxy(h, {
      get: (target, prop) => {
        if (prop === 'close') return () => (live--, target.close());
        const v: unknown = Reflect.get(target, prop);
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
  }) as typeof open;
  return { openFn, peak: () => peak, live: () => live, refusedOpens: () => refusedOpens };
}

describe('the history handle pool: bounded below the descriptor limit', () => {
  it('reads the soft limit from /proc/self/limits and takes a quarter of it, within [MIN_OPEN_FILES, MAX_OPEN_FILES]', () => {
    expect(parseOpenFileLimit(LIMITS)).toBe(128);
    expect(parseOpenFileLimit(LIMITS.replace('128                  4096', 'unlimited            unlimited'))).toBeUndefined();
    expect(parseOpenFileLimit('nothing here')).toBeUndefined();
    expect(poolBound(128)).toBe(32);
    expect(poolBound(1024)).toBe(MAX_OPEN_FILES);
    expect(poolBound(1_048_576)).toBe(MAX_OPEN_FILES);
    expect(poolBound(16)).toBe(MIN_OPEN_FILES);
    // no /proc (not Linux): the fixed bound
    expect(poolBound(undefined)).toBe(MAX_OPEN_FILES);
    if (process.platform === 'linux') expect(parseOpenFileLimit(readFileSync('/proc/self/limits', 'utf8'))).toBeGreaterThan(0);
  });

  it('many sessions at once never hold more handles than the bound, even while every file is busy; all written, in order', async () => {
    const root = tempDir();
    const fs = limitedOpen(Number.POSITIVE_INFINITY);
    const sink = new JsonlHistorySink(root, 100_000, { open: fs.openFn, maxOpenFiles: 4, fsyncIntervalMs: 3_600_000 });
    const sessions = Array.from({ length: 40 }, (_, i) => `s${i}`);
    const sent = new Map<string, string[]>(sessions.map((s) => [s, []]));
    const writes: Promise<unknown>[] = [];
    for (let round = 0; round < 3; round++)
      for (const s of sessions) {
        const e = ev(s);
        sent.get(s)!.push(e.id);
        writes.push(sink.write([e]));
      }
    const outcomes = (await Promise.all(writes)) as { written: number }[];
    expect(outcomes.every((o) => o.written === 1)).toBe(true);
    expect(fs.peak()).toBeLessThanOrEqual(4);
    await sink.shutdown();
    expect(fs.live()).toBe(0);
    for (const s of sessions) {
      const got = readFileSync(path.join(root, 'hermes', `${s}.jsonl`), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => (JSON.parse(l) as { id: string }).id);
      expect(got).toEqual(sent.get(s));
    }
  });

  it('an open that runs out of descriptors (EMFILE) closes the idle handles and succeeds: nothing refused, nothing degraded', async () => {
    const root = tempDir();
    // the process can hold 3 log handles; the pool, not knowing, would keep 16
    const fs = limitedOpen(3);
    const sink = new JsonlHistorySink(root, 100_000, { open: fs.openFn, maxOpenFiles: 16 });
    for (const s of ['a', 'b', 'c']) expect(await sink.write([ev(s)])).toMatchObject({ written: 1 });
    expect(fs.live()).toBe(3);
    expect(await sink.write([ev('d')])).toMatchObject({ written: 1, retained: 0, lost: 0 });
    expect(fs.refusedOpens()).toBe(1);
    expect(sink.health()).toBeUndefined();
    expect(sink.stats()).toMatchObject({ shed_handles: 3, open_files: 1, errors: 0 });
    // the closed ones reopen when written again
    expect(await sink.write([ev('a')])).toMatchObject({ written: 1 });
    await sink.shutdown();
    expect(fs.live()).toBe(0);
  });
});
