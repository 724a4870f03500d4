import { lstat, open, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import PQueue from 'p-queue';
import type { AepEvent } from '../aep/event.js';
import { silentLogger } from '../core/logger.js';
import { errorCode, HealthLatch, type Degradation } from '../core/health-latch.js';
import type { DurableLog, WriteOptions, WriteOutcome } from '../bus/durable-log.js';
import { HandlePool } from './handle-pool.js';
import { NotPrivateError } from '../util/private-path.js';
import { cutBack, linesByFile, newHistoryFile, writeFully, type HistoryFile } from './history-file.js';
import { HistoryLedger } from './history-ledger.js';
import { DIRECTORY_WIDE, FailingFiles } from './failing-files.js';
import { safeFileName } from './safe-file-name.js';
import type { Logger } from '../core/logger.js';
import { HistorySync } from './history-sync.js';
import { PendingWrite } from './pending-write.js';
import { probeWrite, WriteProbe } from './write-probe.js';
import { insideDir, type JsonlHistorySinkOptions } from './sink-options.js';

/** one group write carries at most this much (a backlog is written in several) */
const MAX_GROUP_BYTES = 8 * 1024 * 1024;
/** while writes fail, how often a probe checks whether the history dir takes writes again */
export const PROBE_INTERVAL_MS = 500;

export type { JsonlHistorySinkOptions } from './sink-options.js';

/**
 * The durable stream (AEP-0003 §3.1): `{root}/hermes/{session}.jsonl`, one
 * event per line. Group commit: each file has one write loop; every hook that
 * arrives while a write is in flight joins the NEXT write, so one `write` on
 * the O_APPEND descriptor serves all of them, in arrival order. `write`'s
 * promise settles once the lines reached the operating system, and the hook
 * reply waits for it: a crash of the daemon loses nothing it answered. Power
 * loss is bounded by the fdatasync interval.
 *
 * A failed or short write is cut back (ftruncate) to the end of the last whole
 * hook that landed, so the file always ends in a complete line and a hook is
 * in the file entirely or not at all. The hooks whose write failed were
 * already processed (their seqs and spans exist), so they are not refused: they
 * are answered `retained` and kept, in order, to be written FIRST when the
 * history takes writes again (given up after MAX_ATTEMPTS failed writes, or at
 * shutdown: dropped and counted). While writes fail the sink refuses new hooks
 * (`refusal`), reports itself degraded, and probes the directory until it takes
 * writes again. Bounded: at most `queueMax` lines and `maxBytes` bytes wait,
 * retained ones included; past either new hooks are refused, never buffered.
 *
 * A hook held after a failed write is answered 503 by the daemon (its
 * transport spools it); its lines then carry its spool key (WriteOptions) so
 * the spooled copy is recognised once they land. A hook without a key is not
 * held: given up at once (counted), its re-delivery processed fresh.
 *
 * One session file that cannot be opened or written while the directory can
 * (EACCES, EISDIR, ELOOP, ENOTDIR…, the directory probe decides) fails that
 * session alone: its hooks are refused (`refusal(session)`), counted in
 * `failing_files` and `file_refused`, and the file is retried with a backoff
 * until it takes writes. Directory-wide errors (ENOSPC, EDQUOT, EROFS, EIO)
 * refuse every session, as above.
 */
export class JsonlHistorySink implements DurableLog {
  /** the name `/healthz` lists it under */
  readonly name = 'log';
  private readonly dir: string;
  private readonly nested: boolean;
  /** every file with a handle or waiting lines */
  private readonly files = new Map<string, HistoryFile>();
  /** the files' write loops (one per file at a time): its `onIdle` is the flush */
  private readonly pumps = new PQueue();
  private readonly ledger = new HistoryLedger();
  private readonly sync: HistorySync;
  private readonly handles: HandlePool;
  private readonly maxBytes: number;
  private readonly fsyncIntervalMs: number;
  private readonly latch: HealthLatch;
  private readonly probe: WriteProbe;
  private readonly openFn: typeof open;
  private readonly probeMs: number;
  private errors = 0;
  /** handles closed because their file was deleted or renamed away under the daemon (then reopened at its path) */
  private reopenedMoved = 0;
  private refused = 0;
  /** hooks refused because their own session file fails */
  private fileRefused = 0;
  private readonly failing: FailingFiles;
  private failingTimer: NodeJS.Timeout | undefined;
  private readonly log: Logger;
  private groups = 0;
  private closed = false;
  /** shutting down: retained lines get one last attempt, then are dropped */
  private stopping = false;
  private lastError: string | undefined;
  private syncTimer: NodeJS.Timeout | undefined;

  constructor(
    root: string,
    private readonly queueMax: number,
    opts: JsonlHistorySinkOptions = {},
  ) {
    this.dir = path.resolve(root, opts.subdir ?? 'hermes');
    this.nested = opts.nested ?? false;
    this.maxBytes = opts.maxBytes ?? 256 * 1024 * 1024;
    this.fsyncIntervalMs = opts.fsyncIntervalMs ?? 1_000;
    this.openFn = opts.open ?? open;
    this.probeMs = opts.probeIntervalMs ?? PROBE_INTERVAL_MS;
    const log = opts.log ?? silentLogger;
    this.log = log;
    this.failing = new FailingFiles(opts.probeIntervalMs ?? PROBE_INTERVAL_MS);
    this.latch = new HealthLatch(opts.latch?.sink ?? 'log', log, {
      failing: opts.latch?.failing ?? 'the event log cannot be written: hooks are refused (503) until it can; /healthz is degraded',
      recovered: opts.latch?.recovered ?? 'the event log is writable again',
    });
    this.sync = new HistorySync(this.dir, (err) => (err === undefined ? this.latch.recover('fsync') : this.failed('fsync', err)));
    this.handles = new HandlePool(this.dir, this.openFn, log, this.sync, (f) => this.forgetIfIdle(f), opts.maxOpenFiles);
    this.probe = new WriteProbe(this.dir, this.openFn, opts.probeIntervalMs ?? PROBE_INTERVAL_MS, {
      failing: () => this.latch.has('write') && !this.closed,
      writable: () => {
        this.latch.recover('write', { retained_events: this.ledger.count.retained, dropped_events: this.ledger.count.dropped });
        this.resume();
      },
      stillFailing: (err) => (this.lastError = errorCode(err)),
    });
    if (this.fsyncIntervalMs > 0) {
      this.syncTimer = setInterval(() => this.sync.all(this.files.values()), this.fsyncIntervalMs);
      this.syncTimer.unref();
    }
  }

  refusal(session?: string): string | undefined {
    let why: string | undefined;
    if (this.closed) why = 'closed';
    else if (this.latch.has('write')) why = this.latch.reason('write');
    else if (this.ledger.count.queued >= this.queueMax || this.ledger.count.queuedBytes >= this.maxBytes) why = 'queue full';
    if (why) {
      this.refused++;
      return why;
    }
    if (session === undefined || this.failing.size === 0) return undefined;
    why = this.failing.reason(path.join(this.dir, `${safeFileName(session)}.jsonl`));
    if (why) this.fileRefused++;
    return why;
  }

  refusesSession(session: string): boolean {
    return this.failing.size > 0 && this.failing.reason(path.join(this.dir, `${safeFileName(session)}.jsonl`)) !== undefined;
  }

  health(): Degradation | undefined {
    return this.latch.current();
  }

  write(events: readonly AepEvent[], opts?: WriteOptions): Promise<WriteOutcome> {
    if (events.length === 0) return Promise.resolve({ written: 0, retained: 0, lost: 0 });
    if (this.closed) {
      this.ledger.count.dropped += events.length;
      return Promise.resolve({ written: 0, retained: 0, lost: events.length, reason: 'closed' });
    }
    return this.writeLines(linesByFile(this.dir, events), opts);
  }

  /** Lines (each ending in '\n') by file, every file inside this sink's directory; settles like `write`. */
  writeLines(byFile: ReadonlyMap<string, readonly string[]>, opts: WriteOptions = {}): Promise<WriteOutcome> {
    const key = opts.spoolKey;
    const hold = key !== undefined || opts.hold !== false;
    return new Promise((resolve) => {
      const hook = new PendingWrite(byFile.size, byFile.size, resolve);
      for (const [file, lines] of byFile) {
        // Belt and braces: the encoded name can never leave the history dir.
        if (!insideDir(this.dir, file, this.nested)) {
          this.ledger.count.dropped += lines.length;
          hook.answer(lines.length, 'lost', 'log path escaped the log dir');
          hook.finish(lines.length, false);
          continue;
        }
        const entry = {
          buf: Buffer.from(lines.join(''), 'utf8'),
          lines: lines.length,
          hook,
          attempts: 0,
          answered: false,
          held: false,
          hold,
          ...(key !== undefined ? { key } : {}),
        };
        this.ledger.queue(entry);
        let f = this.files.get(file);
        if (!f) this.files.set(file, (f = newHistoryFile(file)));
        this.handles.touch(f);
        f.queue.push(entry);
        // a file parked behind retained lines (a caller that ignored `refusal`): held with them
        if (!f.pumping && this.parked(f)) this.ledger.retain(f, 0, this.parkedReason(f), this.stopping);
        else this.kick(f);
      }
    });
  }

  /** Whether `f` waits: its first lines failed, and writes still fail (the directory, or this file until its retry is due). */
  private parked(f: HistoryFile): boolean {
    if (f.queue.length === 0 || this.stopping) return false;
    return (f.queue[0]!.attempts > 0 && this.latch.has('write')) || this.failing.waiting(f.path);
  }

  private parkedReason(f: HistoryFile): string {
    return this.latch.reason('write') ?? this.failing.reason(f.path) ?? 'write failed';
  }

  /** The history takes writes again: retained lines go first, file by file, in their order. */
  private resume(): void {
    for (const f of this.files.values()) if (f.queue.length > 0) this.kick(f);
  }

  /** Start the file's write loop unless it runs. */
  private kick(f: HistoryFile): void {
    if (f.pumping) return;
    f.pumping = true;
    void this.pumps.add(() => this.pump(f));
  }

  private forgetIfIdle(f: HistoryFile): void {
    if (!f.handle && !f.pumping && f.queue.length === 0 && !this.failing.has(f.path)) this.files.delete(f.path);
  }

  /** The one write loop of a file: each turn writes everything queued meanwhile, in one call. */
  private async pump(f: HistoryFile): Promise<void> {
    try {
      while (f.queue.length > 0) {
        // lines that failed wait for the probe to find the history dir writable again; what queued behind them is held too
        if (this.parked(f)) {
          this.ledger.retain(f, 0, this.parkedReason(f), this.stopping);
          break;
        }
        // a handle evicted while this loop used it: closed between groups, reopened as the newest
        if (f.evicted) this.handles.release(f);
        if (!f.handle) {
          try {
            await this.handles.acquire(f);
          } catch (err) {
            // a file that is not ours to write (planted, a symlink, another user's): this session's lines are dropped
            // (counted in refused_files and dropped, one warning), never written there; the rest go on
            if (err instanceof NotPrivateError) {
              for (const e of f.queue.splice(0)) this.ledger.drop(e, 'log file refused: not private');
              continue;
            }
            await this.failedFile(f, 'open', err);
            this.ledger.retain(f, this.attemptsOf(f, f.queue.length), `open failed: ${errorCode(err)}`, this.stopping);
            continue;
          }
          if (this.failing.recover(f.path)) this.fileRecovered();
        }
        // the file deleted or renamed away (log rotation) since it was opened: reopened at its path, never written unlinked
        if (!(await stillNamed(f))) {
          this.reopenedMoved++;
          this.handles.release(f);
          continue;
        }
        let bytes = 0;
        let n = 0;
        while (n < f.queue.length && (n === 0 || bytes + f.queue[n]!.buf.length <= MAX_GROUP_BYTES)) bytes += f.queue[n++]!.buf.length;
        await this.writeGroup(f, f.handle!, n);
      }
    } finally {
      f.pumping = false;
      if (f.evicted) this.handles.release(f);
      this.forgetIfIdle(f);
    }
  }

  /** Write the first `n` queued entries of `f` with one call; on failure keep the whole hooks that landed. */
  private async writeGroup(f: HistoryFile, handle: FileHandle, n: number): Promise<void> {
    const group = f.queue.slice(0, n);
    const buf = n === 1 ? group[0]!.buf : Buffer.concat(group.map((e) => e.buf));
    const start = f.size;
    const { written, error } = await writeFully(handle, buf);
    let ok = n;
    if (error) {
      await this.failedFile(f, 'write', error);
      // keep the whole hooks that landed; cut the rest, so the file ends in a complete line
      let keep = 0;
      ok = 0;
      while (ok < group.length && keep + group[ok]!.buf.length <= written) keep += group[ok++]!.buf.length;
      try {
        f.size = await cutBack(handle, start, written, start + keep);
      } catch (err) {
        // the tail could not be repaired here: the handle goes, reopening repairs it
        this.failed('write', err);
        this.handles.release(f);
      }
    } else {
      this.groups++;
      f.size = start + buf.length;
      if (this.failing.recover(f.path)) this.fileRecovered();
    }
    if (ok > 0) f.sync.gen++;
    // AEP_FSYNC_INTERVAL_MS=0: the group reaches the disk before any of its hooks is answered
    if (ok > 0 && this.fsyncIntervalMs === 0) await this.sync.file(f);
    for (const e of f.queue.splice(0, ok)) this.ledger.landed(e);
    if (error) this.ledger.retain(f, this.attemptsOf(f, n - ok), `write failed: ${errorCode(error)}`, this.stopping);
  }

  /**
   * A session file's open or write failed. Directory-wide errors fail the
   * whole sink; any other is that file's alone if the directory still takes
   * a probe write (and fewer than MAX_FAILING_FILES fail): only its session
   * is refused, and it is retried with a backoff.
   */
  private async failedFile(f: HistoryFile, kind: 'open' | 'write', err: unknown): Promise<void> {
    const code = errorCode(err);
    if (!DIRECTORY_WIDE.has(code) && !this.latch.has('write') && (this.failing.has(f.path) || !this.failing.full)) {
      let dirOk = true;
      try {
        if (!this.failing.has(f.path)) await probeWrite(this.dir, this.openFn);
      } catch {
        dirOk = false;
      }
      if (dirOk) {
        this.errors++;
        this.lastError = code;
        if (this.failing.fail(f.path, err))
          this.log.warn('a session log file cannot be written: that session is refused (503, spooled) and retried; the others flow', {
            reason: `${kind} failed: ${code}`,
            failing_files: this.failing.size,
          });
        this.retryFailing();
        return;
      }
    }
    this.failed(kind, err);
  }

  /**
   * How many of a file's first queued hooks used up an attempt: none while the file is a known failing session file
   * (its session is refused and waits for the file to be fixed). Held hooks of such a file are never given up: their
   * transports spooled them, but a spooled copy processed after its first processing was given up would meet identity
   * state that first processing left (a turn already started), so the held events must be the ones that land.
   */
  private attemptsOf(f: HistoryFile, failed: number): number {
    return this.failing.has(f.path) ? 0 : failed;
  }

  private fileRecovered(): void {
    this.log.info('a session log file is writable again', { failing_files: this.failing.size });
    if (this.failing.size === 0 && this.failingTimer) {
      clearInterval(this.failingTimer);
      this.failingTimer = undefined;
    }
  }

  /** While session files fail: every probe interval, the ones whose retry is due are tried again. */
  private retryFailing(): void {
    if (this.failingTimer || this.closed) return;
    this.failingTimer = setInterval(() => {
      if (this.failing.size === 0 || this.closed) {
        clearInterval(this.failingTimer);
        this.failingTimer = undefined;
        return;
      }
      for (const p of this.failing.due()) {
        let f = this.files.get(p);
        if (!f) this.files.set(p, (f = newHistoryFile(p)));
        if (f.pumping) continue;
        if (f.queue.length > 0) this.kick(f);
        else void this.reopen(f);
      }
    }, this.probeMs);
    this.failingTimer.unref();
  }

  /** A failing file with nothing waiting: does it open now? */
  private async reopen(f: HistoryFile): Promise<void> {
    f.pumping = true;
    try {
      if (!f.handle) await this.handles.acquire(f);
      if (this.failing.recover(f.path)) this.fileRecovered();
    } catch (err) {
      this.failing.fail(f.path, err);
    } finally {
      f.pumping = false;
      if (f.queue.length > 0) this.kick(f);
      else this.forgetIfIdle(f);
    }
  }

  private failed(kind: 'open' | 'write' | 'fsync', err: unknown): void {
    this.errors++;
    const code = errorCode(err);
    this.lastError = code;
    if (kind === 'fsync') {
      this.latch.fail('fsync', `fsync failed: ${code}`);
      return;
    }
    this.latch.fail('write', `${kind} failed: ${code}`);
    if (!this.closed) this.probe.start();
  }

  /**
   * At daemon start: find out now whether the history dir takes writes, so an
   * unwritable or full one shows on /healthz (and stderr) before the first
   * hook, and hooks are refused (503) from the start. Never throws.
   */
  async start(): Promise<void> {
    try {
      await probeWrite(this.dir, this.openFn);
    } catch (err) {
      this.failed('write', err);
    }
  }

  async flush(): Promise<void> {
    // every write loop runs until its queue is empty (or parked on a failing disk); loops started meanwhile are awaited too
    await this.pumps.onIdle();
    await Promise.all([...this.files.values()].map((f) => this.sync.file(f)));
  }

  async shutdown(): Promise<void> {
    if (this.closed) return;
    // retained lines get one last attempt, whatever the probe last saw; what still fails is dropped and counted
    this.stopping = true;
    const dropped = this.ledger.count.dropped;
    this.resume();
    await this.flush();
    this.closed = true;
    const lost = this.ledger.count.dropped - dropped;
    // named, once: what was held and could not be written even at the last attempt (hooks answered 503 stay in the spool)
    if (lost > 0)
      this.log.error('the event log could not be written before shutdown: held events dropped (their hooks were answered 503 and spooled)', {
        sink: this.latch.sink,
        dropped_events: lost,
      });
    if (this.syncTimer) clearInterval(this.syncTimer);
    if (this.failingTimer) clearInterval(this.failingTimer);
    this.probe.stop();
    this.latch.close();
    const files = [...this.files.values()];
    this.files.clear();
    await this.handles.releaseAll(files);
  }

  stats(): Record<string, number | boolean | string> {
    const l = this.ledger.count;
    return {
      written: l.written,
      queued: l.queued,
      retained: l.retained,
      queued_bytes: l.queuedBytes,
      dropped: l.dropped,
      errors: this.errors,
      refused: this.refused,
      failing_files: this.failing.size,
      file_refused: this.fileRefused,
      groups: this.groups,
      fsyncs: this.sync.fsyncs,
      fsync_interval_ms: this.fsyncIntervalMs,
      repaired_tails: this.handles.repaired,
      reopened_moved: this.reopenedMoved,
      open_files: this.handles.open,
      refused_files: this.handles.refused,
      shed_handles: this.handles.shed,
      ...(this.lastError ? { last_error: this.lastError } : {}),
    };
  }
}

/** Whether the path of an open history file still names that file (one lstat per group write). */
async function stillNamed(f: HistoryFile): Promise<boolean> {
  if (!f.id) return true;
  try {
    const st = await lstat(f.path);
    return st.dev === f.id.dev && st.ino === f.id.ino;
  } catch {
    return false;
  }
}
