import path from 'node:path';
import { closeSync, openSync, readSync } from 'node:fs';
import type { AepEvent } from '../aep/event.js';
import { emptyCounts, listHistoryFiles, replayFile, replayWholeFile, safeFileName, type HistoryCursor, type HistoryFile } from '../history/index.js';
import { historyJoins } from '../mapping/history-joins.js';
import { HighestEpoch } from '../identity/epoch-store.js';
import { checkBuilderState } from '../otel/index.js';
import { readSnapshot, SnapshotRejected, type SnapshotContent } from './snapshot-file.js';
import type { RestoreReport, SnapshotOptions } from './snapshot-types.js';

/**
 * Start-up: rebuild the previous process's memory from the snapshot and the
 * history past it, or (no usable snapshot) from the history files touched
 * within the window. Every event read back goes to identity (apply alone,
 * with the joins the mapper reads off it), the span mirror, and `replayed`.
 * Returns the report and where each history file was read up to.
 */
export function restoreState(
  opts: SnapshotOptions,
  file: string,
  now: number,
): { report: RestoreReport; cursors: Map<string, HistoryCursor>; files: readonly HistoryFile[] } {
  const t0 = performance.now();
  const files = listHistoryFiles(opts.historyDir);
  const inWindow = (f: HistoryFile) => f.mtimeMs >= now - opts.windowMs;
  // the epochs the history shows: the daemon's next one must be past them (the state dir's epoch file may be lost)
  const highest = new HighestEpoch();
  const onEvent = (ev: AepEvent) => {
    highest.see(ev.epoch);
    opts.identity.restore(ev, historyJoins(ev));
    opts.mirror?.restore(ev);
    opts.replayed?.(ev);
  };
  const counts = emptyCounts();
  let fallback: string | undefined;
  let plan: Plan | undefined;
  try {
    const snap = readSnapshot(file);
    if (!snap) fallback = 'no snapshot';
    else plan = planRestore(opts, snap, files, inWindow);
  } catch (err) {
    // whatever is wrong with it, the history is the truth: never a crash, never a guess
    fallback = err instanceof SnapshotRejected ? err.message : `unreadable (${(err as Error).name})`;
  }
  let lanes = 0;
  const cursors = plan?.cursors ?? new Map<string, HistoryCursor>();
  if (plan) {
    const { snap, mirror } = plan;
    // what the snapshot covers was emitted at its writer's epoch or before
    highest.see(snap.header.epoch);
    // the sessions whose files are gone or out of the window are not rebuilt (usually none: then no check at all)
    const dropped = new Set([...snap.cursors.keys()].filter((name) => !cursors.has(name)));
    const keep = dropped.size === 0 ? () => true : (session: string) => !dropped.has(`${safeFileName(session)}.jsonl`);
    opts.identity.loadLanes(snap.lanes, keep);
    if (mirror && opts.mirror) {
      const m = opts.mirror;
      // parsed and loaded after the daemon listens (or when first needed); unreadable → the mirror replays the history
      m.deferState(
        () => checkBuilderState(JSON.parse(mirror.toString('utf8'))),
        keep,
        () => {
          const c = emptyCounts();
          for (const f of files) if (inWindow(f)) replayWholeFile(f, (ev) => m.restore(ev), c);
          opts.log.error('snapshot: the span state did not read back; rebuilt from the logs', { events: c.events });
        },
      );
    }
    lanes = snap.lanes.length;
    // then, in directory order as a replay would: the bytes past the snapshot, and the files it does not know
    for (const f of files) {
      if (!inWindow(f)) continue;
      const c = cursors.get(f.name);
      if (c && f.size === c.offset) continue;
      if (c) {
        counts.files++;
        try {
          cursors.set(f.name, replayFile(f.path, c.offset, onEvent, counts));
        } catch {
          /* unreadable now: what it held is not rebuilt, as in a replay */
        }
      } else {
        const read = replayWholeFile(f, onEvent, counts);
        if (read) cursors.set(f.name, read);
      }
    }
  } else {
    for (const f of files) {
      if (!inWindow(f)) continue;
      const c = replayWholeFile(f, onEvent, counts);
      if (c) cursors.set(f.name, c);
    }
  }
  const report: RestoreReport = {
    from: plan ? 'snapshot' : 'replay',
    ...(fallback ? { fallback } : {}),
    ms: Math.round(performance.now() - t0),
    lanes,
    replay: counts,
    spoolKeys: plan ? plan.snap.header.spool_keys : [],
    highestEpoch: highest.value,
  };
  return { report, cursors, files };
}

interface Plan {
  readonly snap: SnapshotContent;
  /** the span builder's state, still JSON bytes */
  readonly mirror: Buffer | undefined;
  readonly cursors: Map<string, HistoryCursor>;
}

/**
 * Check a snapshot against the history as it is now, before anything is
 * loaded: same log dir, same mirror settings, and every file it covers still
 * the same file and at least as long, with a line ending at the offset.
 * Files that are gone or fell out of the window are dropped from it (their
 * sessions are not rebuilt, as in a replay).
 */
function planRestore(opts: SnapshotOptions, snap: SnapshotContent, files: readonly HistoryFile[], inWindow: (f: HistoryFile) => boolean): Plan {
  const h = snap.header;
  if (h.daemon !== opts.daemonVersion) throw new SnapshotRejected(`written by daemon ${h.daemon}`);
  if (path.resolve(h.log_dir) !== path.resolve(opts.historyDir)) throw new SnapshotRejected('written for another log dir');
  const want = opts.mirror?.stateFingerprint ?? null;
  let mirror: Buffer | undefined;
  if (want !== null) {
    if (h.mirror !== want || snap.mirror === null)
      throw new SnapshotRejected(h.mirror === null ? 'written with the mirror off' : 'written under other mirror settings');
    mirror = snap.mirror;
  }
  const byName = new Map(files.map((f) => [f.name, f]));
  const cursors = new Map<string, HistoryCursor>();
  for (const [name, c] of snap.cursors) {
    const f = byName.get(name);
    if (!f || !inWindow(f)) continue;
    if (f.ino !== c.ino) throw new SnapshotRejected('a log was replaced');
    if (f.size < c.offset) throw new SnapshotRejected('a log is shorter than the snapshot');
    if (f.size > c.offset && c.offset > 0 && !newlineBefore(f.path, c.offset)) throw new SnapshotRejected('a log does not break at the snapshot');
    cursors.set(name, c);
  }
  return { snap, mirror, cursors };
}

/** Whether the byte just before `offset` is a newline: the snapshot's offset is a line end. */
function newlineBefore(file: string, offset: number): boolean {
  try {
    const fd = openSync(file, 'r');
    try {
      const b = Buffer.alloc(1);
      return readSync(fd, b, 0, 1, offset - 1) === 1 && b[0] === 10;
    } finally {
      closeSync(fd);
    }
  } catch {
    return false;
  }
}
