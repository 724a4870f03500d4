import path from 'node:path';
import type { AepEvent } from '../aep/event.js';
import { findLineEnd, historyDirOf, safeFileName, type HistoryCursor, type HistoryFile } from '../history/index.js';
import type { Consumer, Reporting } from '../bus/consumer.js';
import { builderStateJson } from '../otel/index.js';
import { MAX_SPOOL_KEYS, snapshotPath, writeSnapshot } from './snapshot-file.js';
import { restoreState } from './snapshot-restore.js';
import type { RestoreReport, SnapshotOptions } from './snapshot-types.js';

export type { RestoreReport, SnapshotOptions } from './snapshot-types.js';

/**
 * The start-up snapshot (`{stateDir}/snapshot`, format in snapshot-file.ts).
 *
 * At start, `restore()` loads the identity stage's lanes and the span
 * builder's memory from it and replays only the log bytes past the offsets it
 * covers (plus the logs it does not know that were touched within the replay
 * window); anything wrong with it (corrupt, another version, another log dir,
 * a log shorter than its offset or replaced) means the full replay instead.
 *
 * While running it is an after-durable consumer on the bus: it notes the last
 * event of each session since the previous snapshot; at capture it adds the
 * batches still in their durable write (`inFlight`), whose state the capture
 * already holds. `save()` captures the state (lanes
 * used since the last save are serialized, the others are already text),
 * waits until the log holds every captured event, finds where each touched
 * log's last captured event ends, and writes the file atomically. A save that
 * cannot prove those offsets is abandoned, and the older snapshot (still
 * consistent: the log past it is simply longer) stays.
 */
export class Snapshotter implements Consumer, Reporting {
  readonly name = 'snapshot';
  /** session → id of its last event since the previous save */
  private dirty = new Map<string, string>();
  /** log file name → how far the saved state covers it */
  private cursors = new Map<string, HistoryCursor>();
  private readonly file: string;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;
  private saving: Promise<boolean> | undefined;
  private stopped = false;
  private report: RestoreReport | undefined;
  /** the session logs `restore()` listed (name, size, mtime): the stream's buffer rebuild reuses them rather than stat every file again */
  listed: readonly HistoryFile[] = [];
  private saves = 0;
  /** periodic saves skipped: no event since the last one */
  private unchanged = 0;
  private failures = 0;
  private lastError: string | undefined;
  private lastSave: { at: number; reason: string; captureMs: number; writeMs: number; totalMs: number; bytes: number } | undefined;

  constructor(private readonly opts: SnapshotOptions) {
    this.file = snapshotPath(opts.stateDir);
    this.now = opts.now ?? Date.now;
  }

  // ---- the bus side: which sessions changed, and their last event (once the history holds it) ----

  consume(events: readonly AepEvent[]): void {
    for (const ev of events) this.dirty.set(ev.session, ev.id);
  }

  async flush(): Promise<void> {}

  /** The bus shutting down is not the end: the daemon saves once more after the log is flushed. */
  async shutdown(): Promise<void> {}

  stats(): Record<string, number | boolean | string> {
    return { sessions_changed: this.dirty.size };
  }

  /** The `snapshot` block of `/healthz`. */
  healthz(): Record<string, unknown> {
    const r = this.report;
    return {
      ...(r
        ? {
            started_from: r.from,
            ...(r.fallback ? { fallback: r.fallback } : {}),
            restore_ms: r.ms,
            replayed_files: r.replay.files,
            replayed_events: r.replay.events,
            replayed_bytes: r.replay.bytes,
          }
        : {}),
      interval_ms: this.opts.intervalMs,
      saves: this.saves,
      saves_skipped_unchanged: this.unchanged,
      save_failures: this.failures,
      ...(this.lastError ? { last_error: this.lastError } : {}),
      ...(this.lastSave
        ? {
            last_save_age_s: Math.round((this.now() - this.lastSave.at) / 1000),
            last_save_reason: this.lastSave.reason,
            // capture holds the event loop (hooks wait meanwhile); the write is sliced between awaits
            last_save_capture_ms: this.lastSave.captureMs,
            last_save_write_ms: this.lastSave.writeMs,
            last_save_ms: this.lastSave.totalMs,
            last_save_bytes: this.lastSave.bytes,
          }
        : {}),
      lanes_unreadable: this.opts.identity.dormantErrors,
    };
  }

  // ---- start-up ----

  /**
   * Rebuild the previous process's memory: from the snapshot and the history
   * past it, or (no usable snapshot) from the history within the window
   * (snapshot-restore.ts). Synchronous I/O: it runs before the daemon listens.
   */
  restore(): RestoreReport {
    const { report, cursors, files } = restoreState(this.opts, this.file, this.now());
    this.report = report;
    this.listed = files;
    this.cursors = cursors;
    return report;
  }

  // ---- while running ----

  /** Save every `intervalMs` (never two at once); the timer does not keep the process alive. */
  start(): void {
    if (this.opts.intervalMs <= 0) return;
    this.timer = setInterval(() => void this.save('interval'), this.opts.intervalMs);
    this.timer.unref();
  }

  /**
   * Capture the state and write the snapshot. Resolves true when written,
   * false when abandoned (counted, logged once per kind); never rejects.
   */
  save(reason: 'interval' | 'shutdown'): Promise<boolean> {
    if (this.saving) return this.saving.then(() => (reason === 'shutdown' && !this.stopped ? this.save(reason) : false));
    this.saving = this.saveNow(reason).finally(() => {
      this.saving = undefined;
    });
    return this.saving;
  }

  /** The final save, after the log was flushed and closed; no more periodic ones. */
  async close(): Promise<boolean> {
    if (this.timer) clearInterval(this.timer);
    await this.saving;
    const ok = await this.save('shutdown');
    this.stopped = true;
    return ok;
  }

  private async saveNow(reason: string): Promise<boolean> {
    // nothing happened since the last snapshot this process wrote: it still holds (spans closed idle since are
    // closed again by the next start's own sweep)
    if (reason === 'interval' && this.saves > 0 && this.dirty.size === 0) {
      this.unchanged++;
      return true;
    }
    const t0 = performance.now();
    // capture, synchronously: nothing else runs until this returns
    const dirty = this.dirty;
    // events stamped before now but still in their durable write: the state below holds them, so must the cursors
    for (const batch of this.opts.inFlight?.() ?? []) for (const ev of batch) dirty.set(ev.session, ev.id);
    this.dirty = new Map();
    const lanes = this.opts.identity.saveLanes();
    const mirror = this.opts.mirror?.captureState() ?? null;
    const spoolKeys = [...(this.opts.spoolKeys?.() ?? [])];
    const captureMs = performance.now() - t0;
    try {
      if (spoolKeys.length > MAX_SPOOL_KEYS) throw new Abandoned(`${spoolKeys.length} spool files in flight`);
      // every captured event in its log, then where each changed log's last captured event ends
      await this.opts.drained();
      const dir = historyDirOf(this.opts.historyDir);
      // a few logs at a time: thousands of sessions may have changed since the last save
      const found: (readonly [string, HistoryCursor | undefined])[] = [];
      const todo = [...dirty];
      for (let i = 0; i < todo.length; i += FIND_AT_ONCE) {
        found.push(
          ...(await Promise.all(
            todo.slice(i, i + FIND_AT_ONCE).map(async ([session, id]) => {
              const name = `${safeFileName(session)}.jsonl`;
              return [name, await findLineEnd(path.join(dir, name), id).catch(() => undefined)] as const;
            }),
          )),
        );
      }
      const missing = found.filter(([, c]) => !c).length;
      if (missing > 0) throw new Abandoned(`${missing} log(s) do not hold their last event yet`);
      const now = this.now();
      const cursors = new Map(this.cursors);
      for (const [name, c] of found) cursors.set(name, c!);
      // a log out of the window is not rebuilt at the next start anyway
      for (const [name, c] of cursors) if (c.mtimeMs < now - this.opts.windowMs) cursors.delete(name);
      const w0 = performance.now();
      const bytes = await writeSnapshot(
        this.file,
        {
          daemon: this.opts.daemonVersion,
          written_at: new Date(now).toISOString(),
          reason,
          epoch: this.opts.identity.epoch,
          log_dir: path.resolve(this.opts.historyDir),
          mirror: this.opts.mirror?.stateFingerprint ?? null,
          spool_keys: spoolKeys,
        },
        cursors,
        mirror ? builderStateJson(mirror) : null,
        lanes,
      );
      const writeMs = performance.now() - w0;
      this.cursors = cursors;
      this.saves++;
      this.lastError = undefined;
      this.lastSave = { at: now, reason, captureMs: Math.round(captureMs), writeMs: Math.round(writeMs), totalMs: Math.round(performance.now() - t0), bytes };
      return true;
    } catch (err) {
      // the sessions of this attempt are still to be covered by the next one
      for (const [s, id] of dirty) if (!this.dirty.has(s)) this.dirty.set(s, id);
      this.failures++;
      const why = err instanceof Abandoned ? err.message : ((err as NodeJS.ErrnoException).code ?? (err as Error).name);
      if (why !== this.lastError) this.opts.log.warn('snapshot not written; the previous one stays', { reason: why });
      this.lastError = why;
      return false;
    }
  }
}

/** how many logs are searched for their last captured event at once */
const FIND_AT_ONCE = 64;

class Abandoned extends Error {
  override readonly name = 'Abandoned';
}
