import { chmodSync, statSync, watch, type FSWatcher } from 'node:fs';
import { mkdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { DEFAULT_MAX_BODY_NODES } from '../config/config.js';
import type { HookEnvelope } from '../hermes/envelope.js';
import type { Logger } from '../core/logger.js';
import { MAX_DEPTH } from '../core/limits.js';
import { SpoolDir } from './spool-dir.js';
import { decode, HEADER_MAX, Rejected } from './spool-format.js';

/** group commit: one wait for the log per this many files or bytes (bounded memory, bounded queue) */
const BATCH_FILES = 64;
const BATCH_BYTES = 8 * 1024 * 1024;

/** A spooled hook published, its events on their way to the log. */
interface InFlight {
  readonly name: string;
  readonly bytes: number;
  readonly written: Promise<void>;
  /** a live hook's copy whose held events were written meanwhile: deleted, counted as a duplicate */
  duplicate: boolean;
  /** waits for a live hook's held events (pipeline.ts retainedKeys) before anything is decided */
  readonly waitsForHeld: boolean;
}

/**
 * `ingest` rejects with this when the log can never take the hook as it stands (its session's file is not a private
 * file of this user: planted, another user's): the spool file is moved to `rejected/` (kept for the operator, counted)
 * instead of being retried, so it neither stalls the drain nor is deleted unwritten.
 */
export class NeverWritable extends Error {
  constructor(readonly why: string) {
    super(why);
    this.name = 'NeverWritable';
  }
}

/** The live hooks held after a failed write, by spool key (daemon/retained-keys.ts). */
export interface HeldKeys {
  /** true: already written; a promise: still held (true once written, false if given up); undefined: not held */
  state(key: string): true | Promise<boolean> | undefined;
  consume(key: string): void;
}

export interface SpoolIngestOptions {
  /** `{stateDir}/spool` */
  readonly dir: string;
  /**
   * One spooled hook through the live path at its arrival time; resolves once
   * its events reached the OS, rejects if they could not be written (the file
   * is then kept for a later pass).
   */
  readonly ingest: (raw: unknown, env: HookEnvelope, spooled: { readonly arrival: Date; readonly key: string }) => Promise<void>;
  /**
   * Spool keys already in the log (the `hermesspool` attribute of the events
   * replayed at start): a file the previous process wrote but died before
   * deleting. Deleted, never ingested twice. Cleared once the start-up drain
   * is over (only files present at start can be in the log already).
   */
  readonly seen?: Set<string>;
  /**
   * Live hooks answered 503 while their events were held after a failed
   * write, by the spool key their transport sent: their spooled copy is
   * deleted once those events are written (counted in `duplicates`), waited
   * for while they are held, and ingested fresh if they were given up.
   */
  readonly held?: HeldKeys;
  /**
   * Whether the log refuses this one session now (its history file cannot be written) while it takes the others:
   * its spooled hooks are then parked (left in the spool, in order, counted) instead of stalling the whole drain,
   * and retried once the session is taken again. Absent: nothing is parked.
   */
  readonly sessionRefused?: (session: string) => boolean;
  /** the same bound as a live body (AEP_MAX_BODY_BYTES) */
  readonly maxBodyBytes: number;
  /** the same node cap as a live body (AEP_MAX_BODY_NODES) */
  readonly maxBodyNodes?: number;
  readonly log: Logger;
  /** a `.tmp` untouched this long belongs to a shim that died mid-write */
  readonly staleTmpMs?: number;
  /** the safety-net scan for files the watcher missed */
  readonly scanMs?: number;
}

type Phase = 'idle' | 'initial' | 'live' | 'closed';

/**
 * Ingests the spool (spool-format.ts) in arrival order through the live
 * pipeline. At start the whole spool is drained before any live hook is
 * served (`/hook` answers 503 meanwhile, so shims keep spooling behind it, in
 * order); then, before each live hook, any file that appeared since (a shim
 * that found the daemon not yet up and wrote after the drain) is ingested
 * first, and a watcher plus a periodic scan pick up late files when no hook
 * comes. One file in memory at a time; a file is deleted only after its events
 * were written; a file that cannot be ingested is moved to `rejected/` and
 * counted, never blocking the rest.
 */
export class SpoolIngest {
  ingested = 0;
  /** files whose events were already in the log at start (the previous process died before deleting them) */
  duplicates = 0;
  private phase: Phase = 'idle';
  private running: Promise<void> | undefined;
  private watcher: FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  private kicked = false;
  private failures = 0;
  private waitingForHeld = false;
  /** spool files left in place because their session alone is refused: file name → session */
  private readonly parked = new Map<string, string>();
  /** how many files each parked session has in the spool */
  private readonly parkedBySession = new Map<string, number>();
  /** the sessions found refused during this drain: their later files are not even read */
  private readonly refusedThisPass = new Set<string>();
  private readonly spool: SpoolDir;
  private readonly staleTmpMs: number;

  constructor(private readonly o: SpoolIngestOptions) {
    this.staleTmpMs = o.staleTmpMs ?? 5_000;
    this.spool = new SpoolDir(o.dir, o.log);
  }

  get rejected(): number {
    return this.spool.rejected;
  }

  get errors(): number {
    return this.spool.errors;
  }

  /** True until the start-up drain is over (and again once closing): live hooks are answered 503. */
  get draining(): boolean {
    return this.phase !== 'live';
  }

  /**
   * The drain cannot go on now: the log refused a spooled hook (it backs off),
   * or it waits for a live hook's held events. A live hook then is answered
   * 503 at once (spooled behind, in order) rather than wait on the drain.
   */
  get stalled(): boolean {
    return this.running !== undefined && (this.failures > 0 || this.waitingForHeld);
  }

  /**
   * Create the spool dir (0700), drain it, then go live and watch it.
   * Resolves when live; never rejects (an unusable spool is logged and counted).
   */
  async start(): Promise<void> {
    if (this.phase !== 'idle') return;
    this.phase = 'initial';
    const t0 = Date.now();
    try {
      await mkdir(this.o.dir, { recursive: true, mode: 0o700 });
      // a dir created by someone else, looser: this is content, make it private
      if ((statSync(this.o.dir).mode & 0o077) !== 0) chmodSync(this.o.dir, 0o700);
    } catch (err) {
      this.spool.fail('spool dir unusable', err);
    }
    const before = this.ingested;
    await this.drain();
    if (!this.active) return;
    this.phase = 'live';
    this.o.seen?.clear();
    if (this.ingested > before || this.rejected > 0) {
      this.o.log.info('spool drained', { ingested: this.ingested - before, rejected: this.rejected, ms: Date.now() - t0 });
    }
    try {
      this.watcher = watch(this.o.dir, () => this.kick());
      this.watcher.on('error', () => {
        this.watcher?.close();
        this.watcher = undefined;
      });
    } catch {
      /* the periodic scan still runs */
    }
    this.timer = setInterval(() => this.kick(), this.o.scanMs ?? 1_000);
    this.timer.unref();
  }

  /**
   * Before a live hook: if the spool holds anything, ingest it first, so a
   * hook never overtakes one spooled before it arrived. Cheap when empty (one
   * readdir of a near-empty dir); `undefined` when there is nothing to wait for.
   * Parked files (a session whose history file fails) do not make it wait.
   */
  beforeLive(): Promise<'drained' | 'stalled'> | undefined {
    if (this.phase !== 'live') return undefined;
    const run = this.running ?? (this.pendingUnparked() > 0 ? this.drain() : undefined);
    if (!run) return undefined;
    if (this.stalled) return Promise.resolve('stalled');
    // a drain that stalls (a spooled hook refused, or a live hook's held events awaited, which a full disk can make
    // last): the live hook is answered at once (503, spooled behind) instead of waiting past its transport's deadline
    return new Promise((resolve) => {
      const onStall = () => resolve('stalled');
      this.stallListeners.add(onStall);
      const finish = () => {
        this.stallListeners.delete(onStall);
        resolve('drained');
      };
      run.then(finish, finish);
    });
  }

  /** the live hooks waiting in `beforeLive`, told when the drain stalls */
  private readonly stallListeners = new Set<() => void>();

  private noteStall(): void {
    for (const f of [...this.stallListeners]) f();
    this.stallListeners.clear();
  }

  /**
   * Whether `session` has hooks parked in the spool: a live hook of it must not overtake them, so it is refused
   * (503, spooled behind them) until they are ingested.
   */
  holds(session: string): boolean {
    return this.parkedBySession.has(session);
  }

  private pendingUnparked(): number {
    return this.spool.pendingHooks() - this.parked.size;
  }

  private park(name: string, session: string): void {
    if (this.parked.has(name)) return;
    this.parked.set(name, session);
    this.parkedBySession.set(session, (this.parkedBySession.get(session) ?? 0) + 1);
  }

  private unpark(name: string): void {
    const session = this.parked.get(name);
    if (session === undefined) return;
    this.parked.delete(name);
    const n = (this.parkedBySession.get(session) ?? 1) - 1;
    if (n > 0) this.parkedBySession.set(session, n);
    else this.parkedBySession.delete(session);
  }

  /** a parked session the log takes again: time to retry its files */
  private parkedRetryDue(): boolean {
    for (const s of this.parkedBySession.keys()) if (!this.o.sessionRefused?.(s)) return true;
    return false;
  }

  /** Stop after the file in hand; the rest stays for the next start. */
  async close(): Promise<void> {
    this.phase = 'closed';
    this.watcher?.close();
    this.watcher = undefined;
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }

  stats(): Record<string, number | boolean | string> {
    return {
      ingested: this.ingested,
      pending: this.spool.pendingHooks(),
      dropped: this.spool.dropped(),
      rejected: this.rejected,
      duplicates: this.duplicates,
      parked: this.parked.size,
      parked_sessions: this.parkedBySession.size,
      errors: this.errors,
      draining: this.phase === 'initial',
      ...(this.spool.lastError ? { last_error: this.spool.lastError } : {}),
    };
  }

  /** Watcher events and scans come in bursts: one check per turn of the event loop. */
  private kick(): void {
    if (this.kicked || this.phase !== 'live') return;
    this.kicked = true;
    setImmediate(() => {
      this.kicked = false;
      if (this.phase === 'live' && !this.running && (this.pendingUnparked() > 0 || (this.parked.size > 0 && this.parkedRetryDue()))) void this.drain();
    });
  }

  /** One drain at a time; callers share it. Loops until a listing finds nothing to ingest. */
  private drain(): Promise<void> {
    this.running ??= this.loop().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private get active(): boolean {
    return this.phase === 'initial' || this.phase === 'live';
  }

  private async loop(): Promise<void> {
    this.failures = 0;
    this.refusedThisPass.clear();
    while (this.active) {
      const { hooks, barrier } = await this.spool.list(this.phase === 'initial', this.staleTmpMs);
      // parked files of a session still refused in this drain are not read again
      const open = hooks.filter((n) => !this.refusedThisPass.has(this.parked.get(n) ?? ''));
      if (open.length === 0 && barrier === undefined) break;
      let progressed = false;
      let ok = true;
      let batch: InFlight[] = [];
      let bytes = 0;
      for (const name of open) {
        // a shim is still writing an EARLIER hook: wait for it rather than overtake it
        if (barrier !== undefined && name > barrier) break;
        if (!this.active) break;
        const f = await this.publish(name);
        progressed = true;
        if (!f) continue;
        batch.push(f);
        bytes += f.bytes;
        if (batch.length >= BATCH_FILES || bytes >= BATCH_BYTES) {
          ok = await this.settle(batch);
          batch = [];
          bytes = 0;
          if (!ok) break;
        }
      }
      // even when closing: what was published is waited for and deleted
      if (batch.length > 0) ok = (await this.settle(batch)) && ok;
      if (!ok) {
        // events that could not be written: their files stay; retry the pass after a backoff
        this.failures++;
        this.noteStall();
        await sleep(Math.min(5_000, 50 * 2 ** Math.min(this.failures, 7)));
        continue;
      }
      this.failures = 0;
      if (!progressed) await sleep(5);
    }
    this.failures = 0;
    this.refusedThisPass.clear();
    if (this.active) {
      this.spool.resetLedger();
      // a full disk's drop markers, now that the disk took the spool's writes again
      this.spool.foldDropMarks();
    }
  }

  /**
   * Read, validate and publish one file through the live path. Returns what
   * is in flight, or nothing when the file was rejected, gone, or already in
   * the log. One file in memory at a time.
   */
  private async publish(name: string): Promise<InFlight | undefined> {
    const file = path.join(this.o.dir, name);
    const key = name.slice(0, -'.hook'.length);
    // a parked file of a session the log still refuses: left as it is, unread
    const parkedFor = this.parked.get(name);
    if (parkedFor !== undefined && this.o.sessionRefused?.(parkedFor)) {
      this.refusedThisPass.add(parkedFor);
      return undefined;
    }
    this.unpark(name);
    let buf: Buffer;
    try {
      const st = await stat(file);
      if (this.o.seen?.has(key)) {
        this.duplicates++;
        await this.spool.remove([{ name, bytes: st.size }]);
        return undefined;
      }
      if (st.size > this.o.maxBodyBytes + HEADER_MAX) return void (await this.spool.reject(name, 'larger than AEP_MAX_BODY_BYTES', st.size));
      buf = await readFile(file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      this.spool.fail('spool file unreadable', err);
      return void (await this.spool.reject(name, 'unreadable', 0));
    }
    let parsed: ReturnType<typeof decode>;
    try {
      parsed = decode(buf, { maxNodes: this.o.maxBodyNodes ?? DEFAULT_MAX_BODY_NODES, maxDepth: MAX_DEPTH });
    } catch (err) {
      return void (await this.spool.reject(name, err instanceof Rejected ? err.message : 'invalid', buf.length));
    }
    // its session alone is refused (its history file fails): parked, in order, instead of stalling every session
    const session = parsed.env.session_id;
    if (session && (this.refusedThisPass.has(session) || this.o.sessionRefused?.(session))) {
      this.refusedThisPass.add(session);
      this.park(name, session);
      return undefined;
    }
    const spooled = { arrival: parsed.arrival, key };
    const ingest = (): Promise<void> => {
      // published from here on (a refusal rejects within this same turn, before any timer can look)
      this.spool.published.add(key);
      let p: Promise<void>;
      try {
        p = this.o.ingest(parsed.raw, parsed.env, spooled);
      } catch (err) {
        p = Promise.reject(err);
      }
      p.catch(() => this.spool.published.delete(key));
      return p;
    };
    // the copy of a live hook answered 503 while its events were held: those may be written already, or soon
    const held = this.o.held?.state(key);
    if (held === true) {
      this.duplicates++;
      this.o.held!.consume(key);
      await this.spool.remove([{ name, bytes: buf.length }]);
      return undefined;
    }
    if (held === undefined) return { name, bytes: buf.length, written: ingest(), duplicate: false, waitsForHeld: false };
    const f: InFlight = {
      name,
      bytes: buf.length,
      duplicate: false,
      waitsForHeld: true,
      written: held.then((ok) => {
        if (!ok) return ingest();
        f.duplicate = true;
        this.o.held!.consume(key);
      }),
    };
    return f;
  }

  /** Wait for a batch's events to be written; delete the files whose events are. False if any were not (those stay). */
  private async settle(batch: readonly InFlight[]): Promise<boolean> {
    this.waitingForHeld = batch.some((f) => f.waitsForHeld);
    if (this.waitingForHeld) this.noteStall();
    const results = await Promise.allSettled(batch.map((f) => f.written));
    this.waitingForHeld = false;
    const done = batch.filter((_, i) => results[i]!.status === 'fulfilled');
    // a hook the log can never take as it stands: moved aside (kept, counted), neither retried nor deleted
    for (const [i, r] of results.entries()) {
      if (r.status === 'rejected' && r.reason instanceof NeverWritable) await this.spool.reject(batch[i]!.name, r.reason.why, batch[i]!.bytes);
    }
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected' && !(r.reason instanceof NeverWritable));
    if (failed) this.spool.fail('spooled hook not written; kept for a later pass', failed.reason);
    const dups = done.filter((f) => f.duplicate).length;
    this.duplicates += dups;
    this.ingested += done.length - dups;
    await this.spool.remove(done);
    return failed === undefined;
  }

  /**
   * Keys of spooled hooks whose events were published but whose file is not
   * deleted yet. The start-up snapshot records them: its log offsets cover
   * those events, so after a crash the next start must not ingest them again.
   */
  publishedNotDeleted(): string[] {
    return [...this.spool.published];
  }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());
