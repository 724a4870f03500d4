import { mkdir, open, unlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { AepEvent } from '../aep/event.js';
import { silentLogger, type Logger } from '../daemon/log.js';
import { errorCode, HealthLatch, type Degradation } from './health-latch.js';
import type { EventSink, WriteOutcome } from './sink.js';
import { safeFileName } from './safe-file-name.js';

/** handles kept open (least recently written closed first) */
const MAX_OPEN_FILES = 256;
/** one group write carries at most this much (a backlog is written in several) */
const MAX_GROUP_BYTES = 8 * 1024 * 1024;
/** while writes fail, how often a probe checks whether the log dir takes writes again */
export const PROBE_INTERVAL_MS = 500;
const PROBE_BYTES = 64 * 1024;
/** a hook whose lines failed this many writes is given up (dropped, counted) */
export const MAX_ATTEMPTS = 5;
const NEWLINE = 0x0a;

export interface JsonlLogSinkOptions {
  /** bytes waiting for the disk, at most (one line at capture full can be a whole tool result) */
  readonly maxBytes?: number;
  /** fdatasync every file written within this many ms; 0 = before each group is acknowledged */
  readonly fsyncIntervalMs?: number;
  readonly log?: Logger;
  readonly probeIntervalMs?: number;
  /** how files are opened (tests inject faults here); `fs/promises` open by default */
  readonly open?: typeof open;
}

/**
 * One `write` call's fate, across the files it touched: answered once (the
 * hook reply) when every part is written, retained or lost; finished once
 * every part is written or lost.
 */
class PendingWrite {
  private written = 0;
  private retained = 0;
  private lost = 0;
  private finalWritten = 0;
  private finalLost = 0;
  private reason: string | undefined;
  private resolveFinal: ((v: { written: number; lost: number }) => void) | undefined;

  constructor(
    private unanswered: number,
    private unfinished: number,
    private readonly reply: (o: WriteOutcome) => void,
  ) {}

  answer(lines: number, state: 'written' | 'retained' | 'lost', reason?: string): void {
    if (state === 'written') this.written += lines;
    else if (state === 'retained') this.retained += lines;
    else this.lost += lines;
    this.reason ??= reason;
    if (--this.unanswered > 0) return;
    const final = this.retained > 0 ? new Promise<{ written: number; lost: number }>((r) => (this.resolveFinal = r)) : undefined;
    this.reply({
      written: this.written,
      retained: this.retained,
      lost: this.lost,
      ...(this.reason ? { reason: this.reason } : {}),
      ...(final ? { final } : {}),
    });
    this.maybeFinish();
  }

  finish(lines: number, written: boolean): void {
    if (written) this.finalWritten += lines;
    else this.finalLost += lines;
    this.unfinished--;
    this.maybeFinish();
  }

  private maybeFinish(): void {
    if (this.unfinished === 0 && this.unanswered === 0) this.resolveFinal?.({ written: this.finalWritten, lost: this.finalLost });
  }
}

/** One hook's lines for one file: written whole or not at all. */
interface Entry {
  readonly buf: Buffer;
  readonly lines: number;
  readonly hook: PendingWrite;
  /** failed writes so far */
  attempts: number;
  /** the hook reply was given (written, retained or lost) */
  answered: boolean;
  /** answered `retained`: counted in `retained` until written or dropped */
  held: boolean;
}

interface LogFile {
  readonly path: string;
  handle: FileHandle | undefined;
  /** bytes of the file known to end in '\n': where a failed write is cut back to */
  size: number;
  readonly queue: Entry[];
  /** the write loop, while one runs */
  pump: Promise<void> | undefined;
  /** counts the writes that landed; `synced` is the count the last finished fdatasync covered */
  gen: number;
  synced: number;
  syncing: Promise<boolean> | undefined;
}

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
 * are answered `retained` and kept, in order, to be written FIRST when the log
 * takes writes again (given up after MAX_ATTEMPTS failed writes, or at
 * shutdown: dropped and counted). While writes fail the sink refuses new hooks
 * (`refusal`), reports itself degraded, and probes the directory until it takes
 * writes again. Bounded: at most `queueMax` lines and `maxBytes` bytes wait,
 * retained ones included; past either new hooks are refused, never buffered.
 */
export class JsonlLogSink implements EventSink {
  readonly name = 'log';
  readonly durable = true;
  private readonly dir: string;
  private readonly files = new Map<string, LogFile>();
  private readonly closing = new Set<Promise<void>>();
  private readonly maxBytes: number;
  private readonly fsyncIntervalMs: number;
  private readonly probeIntervalMs: number;
  private readonly log: Logger;
  private readonly latch: HealthLatch;
  private readonly openFn: typeof open;
  private openHandles = 0;
  private queued = 0;
  private queuedBytes = 0;
  private written = 0;
  /** lines whose write failed, held to be written when the log takes writes again */
  private retained = 0;
  private dropped = 0;
  private errors = 0;
  private refused = 0;
  private groups = 0;
  private fsyncs = 0;
  private repaired = 0;
  private closed = false;
  /** shutting down: retained lines get one last attempt, then are dropped */
  private stopping = false;
  private lastError: string | undefined;
  /** files created, and how many of them the last finished directory fsync covered */
  private dirGen = 0;
  private dirSynced = 0;
  private dirSyncing: Promise<boolean> | undefined;
  private syncTimer: NodeJS.Timeout | undefined;
  private probeTimer: NodeJS.Timeout | undefined;
  private probing = false;

  constructor(
    root: string,
    private readonly queueMax: number,
    opts: JsonlLogSinkOptions = {},
  ) {
    this.dir = path.resolve(root, 'hermes');
    this.maxBytes = opts.maxBytes ?? 256 * 1024 * 1024;
    this.fsyncIntervalMs = opts.fsyncIntervalMs ?? 1_000;
    this.probeIntervalMs = opts.probeIntervalMs ?? PROBE_INTERVAL_MS;
    this.log = opts.log ?? silentLogger;
    this.openFn = opts.open ?? open;
    this.latch = new HealthLatch('log', this.log, {
      failing: 'the event log cannot be written: hooks are refused (503) until it can; /healthz is degraded',
      recovered: 'the event log is writable again',
    });
    if (this.fsyncIntervalMs > 0) {
      this.syncTimer = setInterval(() => this.syncAll(), this.fsyncIntervalMs);
      this.syncTimer.unref();
    }
  }

  refusal(): string | undefined {
    let why: string | undefined;
    if (this.closed) why = 'closed';
    else if (this.latch.has('write')) why = this.latch.reason('write');
    else if (this.queued >= this.queueMax || this.queuedBytes >= this.maxBytes) why = 'queue full';
    if (why) this.refused++;
    return why;
  }

  health(): Degradation | undefined {
    return this.latch.current();
  }

  write(events: readonly AepEvent[]): Promise<WriteOutcome> {
    if (events.length === 0) return Promise.resolve({ written: 0, retained: 0, lost: 0 });
    if (this.closed) {
      this.dropped += events.length;
      return Promise.resolve({ written: 0, retained: 0, lost: events.length, reason: 'closed' });
    }
    // a hook's events share one session, so this is one file in practice; kept general
    const byFile = new Map<string, string[]>();
    for (const ev of events) {
      const file = path.join(this.dir, `${safeFileName(ev.session)}.jsonl`);
      let lines = byFile.get(file);
      if (!lines) byFile.set(file, (lines = []));
      lines.push(`${JSON.stringify(ev)}\n`);
    }
    return new Promise((resolve) => {
      const hook = new PendingWrite(byFile.size, byFile.size, resolve);
      for (const [file, lines] of byFile) {
        // Belt and braces: the encoded name can never leave the log dir.
        if (path.dirname(file) !== this.dir) {
          this.dropped += lines.length;
          hook.answer(lines.length, 'lost', 'log path escaped the log dir');
          hook.finish(lines.length, false);
          continue;
        }
        const buf = Buffer.from(lines.join(''), 'utf8');
        this.queued += lines.length;
        this.queuedBytes += buf.length;
        const f = this.fileFor(file);
        f.queue.push({ buf, lines: lines.length, hook, attempts: 0, answered: false, held: false });
        // a file parked behind retained lines (a caller that ignored `refusal`): held with them
        if (!f.pump && this.parked(f)) this.retain(f, 0, this.latch.reason('write') ?? 'write failed');
        else f.pump ??= this.pump(f);
      }
    });
  }

  /** An entry is in the file: answer its hook (unless already answered `retained`) and finish it. */
  private landed(e: Entry): void {
    this.queued -= e.lines;
    this.queuedBytes -= e.buf.length;
    this.written += e.lines;
    if (e.held) this.retained -= e.lines;
    if (!e.answered) e.hook.answer(e.lines, 'written');
    e.answered = true;
    e.held = false;
    e.hook.finish(e.lines, true);
  }

  /** An entry is given up: counted as dropped. */
  private drop(e: Entry, reason: string): void {
    this.queued -= e.lines;
    this.queuedBytes -= e.buf.length;
    this.dropped += e.lines;
    if (e.held) this.retained -= e.lines;
    if (!e.answered) e.hook.answer(e.lines, 'lost', reason);
    e.answered = true;
    e.held = false;
    e.hook.finish(e.lines, false);
  }

  /**
   * A write to `f` failed: its first `failed` entries failed it. Every entry
   * still queued for the file (those, and the ones behind them, which may not
   * overtake them) is answered `retained` and waits for the probe, or is
   * dropped once it has failed MAX_ATTEMPTS times (or at shutdown).
   */
  private retain(f: LogFile, failed: number, reason: string): void {
    for (let i = 0; i < failed; i++) f.queue[i]!.attempts++;
    const keep: Entry[] = [];
    for (const e of f.queue) {
      if (this.stopping || e.attempts >= MAX_ATTEMPTS) {
        this.drop(e, reason);
        continue;
      }
      if (!e.answered) {
        e.answered = true;
        e.held = true;
        this.retained += e.lines;
        e.hook.answer(e.lines, 'retained', reason);
      }
      keep.push(e);
    }
    f.queue.splice(0, f.queue.length, ...keep);
  }

  /** Whether `f` waits for the probe: its first lines failed, and writes still fail. */
  private parked(f: LogFile): boolean {
    return f.queue.length > 0 && f.queue[0]!.attempts > 0 && this.latch.has('write') && !this.stopping;
  }

  /** The log takes writes again: retained lines go first, file by file, in their order. */
  private resume(): void {
    for (const f of this.files.values()) if (f.queue.length > 0) f.pump ??= this.pump(f);
  }

  private fileFor(file: string): LogFile {
    let f = this.files.get(file);
    if (f)
      this.files.delete(file); // re-insert: Map order is recency order
    else f = { path: file, handle: undefined, size: 0, queue: [], pump: undefined, gen: 0, synced: 0, syncing: undefined };
    this.files.set(file, f);
    return f;
  }

  /** The one write loop of a file: each turn writes everything queued meanwhile, in one call. */
  private async pump(f: LogFile): Promise<void> {
    try {
      while (f.queue.length > 0) {
        // lines that failed wait for the probe to find the log dir writable again; what queued behind them is held too
        if (this.parked(f)) {
          this.retain(f, 0, this.latch.reason('write') ?? 'write failed');
          break;
        }
        if (!f.handle) {
          try {
            await this.openFile(f);
          } catch (err) {
            this.failed('open', err);
            this.retain(f, f.queue.length, `open failed: ${errorCode(err)}`);
            continue;
          }
        }
        let bytes = 0;
        let n = 0;
        while (n < f.queue.length && (n === 0 || bytes + f.queue[n]!.buf.length <= MAX_GROUP_BYTES)) bytes += f.queue[n++]!.buf.length;
        await this.writeGroup(f, n);
      }
    } finally {
      f.pump = undefined;
      if (!f.handle && f.queue.length === 0) this.files.delete(f.path);
      this.evictIdle();
    }
  }

  /** Write the first `n` queued entries of `f` with one call; on failure keep the whole hooks that landed. */
  private async writeGroup(f: LogFile, n: number): Promise<void> {
    const handle = f.handle!;
    const group = f.queue.slice(0, n);
    const buf = n === 1 ? group[0]!.buf : Buffer.concat(group.map((e) => e.buf));
    const start = f.size;
    let off = 0;
    try {
      while (off < buf.length) {
        const { bytesWritten } = await handle.write(buf, off, buf.length - off);
        if (bytesWritten <= 0) throw Object.assign(new Error('short write'), { code: 'ESHORTWRITE' });
        off += bytesWritten;
      }
    } catch (err) {
      this.failed('write', err);
      // keep the whole hooks that landed; cut the rest, so the file ends in a complete line
      let keep = 0;
      let ok = 0;
      while (ok < group.length && keep + group[ok]!.buf.length <= off) keep += group[ok++]!.buf.length;
      await this.cutBack(f, start, off, start + keep);
      if (ok > 0) {
        f.gen++;
        if (this.fsyncIntervalMs === 0) await this.syncFile(f);
      }
      for (const e of f.queue.splice(0, ok)) this.landed(e);
      this.retain(f, n - ok, `write failed: ${errorCode(err)}`);
      return;
    }
    this.groups++;
    f.size = start + buf.length;
    f.gen++;
    // AEP_FSYNC_INTERVAL_MS=0: the group reaches the disk before any of its hooks is answered
    if (this.fsyncIntervalMs === 0) await this.syncFile(f);
    for (const e of f.queue.splice(0, n)) this.landed(e);
  }

  /**
   * After a failed write: truncate back to `cut`, the end of the last whole
   * hook that landed. If the file is not the size this sink expects (someone
   * else wrote to it: not supported, best effort), cut to its last complete
   * line instead. If even that fails, the handle is dropped; reopening repairs
   * the tail.
   */
  private async cutBack(f: LogFile, start: number, wrote: number, cut: number): Promise<void> {
    const handle = f.handle!;
    try {
      const size = (await handle.stat()).size;
      const target = size === start + wrote ? cut : await lastLineEnd(handle, size);
      if (size > target) await handle.truncate(target);
      f.size = target;
    } catch (err) {
      this.failed('write', err);
      this.dropHandle(f);
    }
  }

  /** Open for append; a file that ends in a torn line (a crash or power loss mid-write) is cut back first. */
  private async openFile(f: LogFile): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    // read as well as append: a torn tail is found by reading back
    const handle = await this.openFn(f.path, 'a+', 0o600);
    try {
      let size = (await handle.stat()).size;
      if (size === 0) this.dirGen++;
      else if (!(await endsInNewline(handle, size))) {
        const end = await lastLineEnd(handle, size);
        if (end < size) {
          await handle.truncate(end);
          this.repaired++;
          this.log.warn('a session log ended in a torn line: cut back to its last complete line', { bytes: size - end });
          size = end;
        }
      }
      f.handle = handle;
      f.size = size;
      this.openHandles++;
    } catch (err) {
      await handle.close().catch(() => undefined);
      throw err;
    }
  }

  private dropHandle(f: LogFile): void {
    const handle = f.handle;
    if (!handle) return;
    f.handle = undefined;
    this.openHandles--;
    this.track((f.syncing ?? Promise.resolve()).then(() => handle.close()).catch(() => undefined));
  }

  /** Close the least recently written idle handles past the limit (synced first, for the power-loss bound). */
  private evictIdle(): void {
    if (this.openHandles <= MAX_OPEN_FILES) return;
    for (const f of this.files.values()) {
      if (this.openHandles <= MAX_OPEN_FILES) break;
      if (!f.handle || f.pump || f.queue.length > 0) continue;
      this.files.delete(f.path);
      const handle = f.handle;
      f.handle = undefined;
      this.openHandles--;
      this.track(
        (async () => {
          await f.syncing;
          if (f.gen > f.synced) await this.datasync(handle);
          await handle.close();
        })().catch(() => undefined),
      );
    }
  }

  private track(p: Promise<void>): void {
    this.closing.add(p);
    void p.finally(() => this.closing.delete(p));
  }

  private async datasync(handle: FileHandle): Promise<boolean> {
    try {
      await handle.datasync();
      this.fsyncs++;
      this.latch.recover('fsync');
      return true;
    } catch (err) {
      this.failed('fsync', err);
      return false;
    }
  }

  /** Resolve once every write to `f` that landed before this call is on the disk (or the fsync failed, counted). */
  private async syncFile(f: LogFile): Promise<void> {
    const target = f.gen;
    while (f.synced < target && f.handle) {
      if (!f.syncing) {
        const gen = f.gen;
        const p: Promise<boolean> = this.datasync(f.handle).then((ok) => {
          if (ok) f.synced = Math.max(f.synced, gen);
          if (f.syncing === p) f.syncing = undefined;
          return ok;
        });
        f.syncing = p;
      }
      if (!(await f.syncing)) return;
    }
    await this.syncDir();
  }

  /** The periodic fdatasync: every file written since the last one, and the directory if a file was created. */
  private syncAll(): void {
    for (const f of this.files.values()) {
      if (f.handle && f.gen > f.synced && !f.syncing) void this.syncFile(f);
    }
    void this.syncDir();
  }

  /** A new file's directory entry must reach the disk too, or a power loss can drop the whole file. */
  private async syncDir(): Promise<void> {
    const target = this.dirGen;
    while (this.dirSynced < target) {
      if (!this.dirSyncing) {
        const gen = this.dirGen;
        const p: Promise<boolean> = this.fsyncDir().then((ok) => {
          if (ok) this.dirSynced = Math.max(this.dirSynced, gen);
          if (this.dirSyncing === p) this.dirSyncing = undefined;
          return ok;
        });
        this.dirSyncing = p;
      }
      if (!(await this.dirSyncing)) return;
    }
  }

  private async fsyncDir(): Promise<boolean> {
    try {
      const d = await open(this.dir, 'r');
      try {
        await d.sync();
      } finally {
        await d.close();
      }
      return true;
    } catch {
      return false;
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
    this.startProbe();
  }

  /**
   * While writes fail no hook is taken, so nothing would ever find out that
   * they work again: a probe writes and removes a 64 KiB file in the log dir,
   * and only the probe ends the episode (a small write that happens to fit in
   * a file's last page proves nothing about a full disk, and would flap).
   */
  private startProbe(): void {
    if (this.probeTimer || this.closed) return;
    this.probeTimer = setInterval(() => void this.probe(), this.probeIntervalMs);
    this.probeTimer.unref();
  }

  private async probe(): Promise<void> {
    if (this.probing) return;
    if (!this.latch.has('write') || this.closed) {
      clearInterval(this.probeTimer);
      this.probeTimer = undefined;
      return;
    }
    this.probing = true;
    try {
      await this.probeWrite();
      this.latch.recover('write', { retained_events: this.retained, dropped_events: this.dropped });
      this.resume();
    } catch (err) {
      this.lastError = errorCode(err);
    } finally {
      this.probing = false;
    }
  }

  /** Write and remove a 64 KiB file in the log dir; throws what the filesystem said. */
  private async probeWrite(): Promise<void> {
    const file = path.join(this.dir, `.write-probe.${process.pid}`);
    try {
      await mkdir(this.dir, { recursive: true, mode: 0o700 });
      const h = await this.openFn(file, 'w', 0o600);
      try {
        const buf = Buffer.alloc(PROBE_BYTES, NEWLINE);
        let off = 0;
        while (off < buf.length) {
          const { bytesWritten } = await h.write(buf, off);
          if (bytesWritten <= 0) throw Object.assign(new Error('short write'), { code: 'ESHORTWRITE' });
          off += bytesWritten;
        }
      } finally {
        await h.close();
      }
    } finally {
      await unlink(file).catch(() => undefined);
    }
  }

  /**
   * At daemon start: find out now whether the log dir takes writes, so an
   * unwritable or full one shows on /healthz (and stderr) before the first
   * hook, and hooks are refused (503) from the start. Never throws.
   */
  async start(): Promise<void> {
    try {
      await this.probeWrite();
    } catch (err) {
      this.failed('write', err);
    }
  }

  async flush(): Promise<void> {
    // every write loop runs until its queue is empty (or parked on a failing disk); loops started meanwhile are awaited too
    for (;;) {
      const pumps = [...this.files.values()].map((f) => f.pump).filter((p): p is Promise<void> => p !== undefined);
      if (pumps.length === 0) break;
      await Promise.all(pumps);
    }
    await Promise.all([...this.files.values()].map((f) => this.syncFile(f)));
  }

  async shutdown(): Promise<void> {
    if (this.closed) return;
    // retained lines get one last attempt, whatever the probe last saw; what still fails is dropped and counted
    this.stopping = true;
    this.resume();
    await this.flush();
    this.closed = true;
    if (this.syncTimer) clearInterval(this.syncTimer);
    if (this.probeTimer) clearInterval(this.probeTimer);
    this.latch.close();
    for (const f of this.files.values()) this.dropHandle(f);
    this.files.clear();
    await Promise.allSettled([...this.closing]);
  }

  stats(): Record<string, number | boolean | string> {
    return {
      written: this.written,
      queued: this.queued,
      retained: this.retained,
      queued_bytes: this.queuedBytes,
      dropped: this.dropped,
      errors: this.errors,
      refused: this.refused,
      groups: this.groups,
      fsyncs: this.fsyncs,
      fsync_interval_ms: this.fsyncIntervalMs,
      repaired_tails: this.repaired,
      open_files: this.openHandles,
      ...(this.lastError ? { last_error: this.lastError } : {}),
    };
  }
}

async function endsInNewline(handle: FileHandle, size: number): Promise<boolean> {
  const b = Buffer.alloc(1);
  const { bytesRead } = await handle.read(b, 0, 1, size - 1);
  return bytesRead === 1 && b[0] === NEWLINE;
}

/** Where the last complete line of the first `size` bytes ends (0 if there is none), reading backwards. */
async function lastLineEnd(handle: FileHandle, size: number): Promise<number> {
  const chunk = Buffer.alloc(Math.min(size, 64 * 1024));
  let end = size;
  while (end > 0) {
    const len = Math.min(chunk.length, end);
    const { bytesRead } = await handle.read(chunk, 0, len, end - len);
    const i = chunk.subarray(0, bytesRead).lastIndexOf(NEWLINE);
    if (i >= 0) return end - len + i + 1;
    end -= len;
  }
  return 0;
}
