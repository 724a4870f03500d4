import { chmodSync, readdirSync, statSync, truncateSync, watch, type FSWatcher } from 'node:fs';
import { appendFile, mkdir, readFile, rename, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { hookEnvelopeSchema, type HookEnvelope } from '../hermes/envelope.js';
import type { Logger } from './log.js';
import { DEFAULT_MAX_BODY_NODES } from '../config/config.js';
import { BodyRefusal, parseBounded } from './json-body.js';
import type { ScanLimits } from './json-scan.js';
import { MAX_DEPTH } from './server.js';

/**
 * The spool: hooks the shim could not deliver (daemon down, starting,
 * closing), one file each, written by the shim (src/shim/hook.cts):
 *
 *   {stateDir}/spool/<key>.hook     key = 15-digit arrival ms, 20-digit monotonic ns, pid, random:
 *                                   lexical order = arrival order
 *   {stateDir}/spool/.<key>.tmp     a shim still writing it (renamed to <key>.hook when whole)
 *   {stateDir}/spool/in.files, in.kib, out.files, out.kib
 *                                   the cap's ledgers: each counts by its SIZE (one byte per file,
 *                                   one per KiB); shims append `in.*`, the daemon `out.*`
 *   {stateDir}/spool/dropped        one byte per hook a shim dropped (spool full, disk error)
 *   {stateDir}/spool/rejected/      files that could not be ingested, moved aside (content-bearing)
 *
 * A `.hook` file is one JSON header line `{"spool":1,"arrival":ISO,"arrival_ms":n,"bytes":n}`,
 * then exactly `bytes` bytes of the envelope as Hermes wrote it.
 */
export const HOOK_FILE = /^(\d{15}-\d{20}-\d{1,10}-[a-z0-9]{0,16})\.hook$/;
const TMP_FILE = /^\.(\d{15}-\d{20}-\d{1,10}-[a-z0-9]{0,16})\.tmp$/;
const HEADER_MAX = 512;
/** group commit: one wait for the log per this many files or bytes (bounded memory, bounded queue) */
const BATCH_FILES = 64;
const BATCH_BYTES = 8 * 1024 * 1024;

/** A spooled hook published, its events on their way to the log. */
interface InFlight {
  readonly name: string;
  readonly bytes: number;
  readonly written: Promise<void>;
}

const headerSchema = z.object({
  spool: z.literal(1),
  arrival_ms: z.number().int().min(0).max(8.64e15),
  bytes: z.number().int().min(0),
});

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

class Rejected extends Error {}

/**
 * Ingests the spool in arrival order through the live pipeline. At start the
 * whole spool is drained before any live hook is served (`/hook` answers 503
 * meanwhile, so shims keep spooling behind it, in order); then, before each
 * live hook, any file that appeared since (a shim that found the daemon not
 * yet up and wrote after the drain) is ingested first, and a watcher plus a
 * periodic scan pick up late files when no hook comes. One file in memory at
 * a time; a file is deleted only after its events were written; a file that
 * cannot be ingested is moved to `rejected/` and counted, never blocking the
 * rest.
 */
export class SpoolIngest {
  ingested = 0;
  rejected = 0;
  errors = 0;
  /** files whose events were already in the log at start (the previous process died before deleting them) */
  duplicates = 0;
  private phase: Phase = 'idle';
  private running: Promise<void> | undefined;
  private watcher: FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  private kicked = false;
  private lastError: string | undefined;
  /** ingested, but could not be deleted: never ingested twice by this process */
  private readonly done = new Set<string>();
  /** spool keys whose events were published and whose file is not deleted yet (see publishedNotDeleted) */
  private readonly published = new Set<string>();
  private readonly staleTmpMs: number;

  constructor(private readonly o: SpoolIngestOptions) {
    this.staleTmpMs = o.staleTmpMs ?? 5_000;
  }

  /** True until the start-up drain is over (and again once closing): live hooks are answered 503. */
  get draining(): boolean {
    return this.phase !== 'live';
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
      this.fail('spool dir unusable', err);
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
   */
  beforeLive(): Promise<void> | undefined {
    if (this.phase !== 'live') return undefined;
    if (this.running) return this.running;
    return this.pendingHooks() > 0 ? this.drain() : undefined;
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
      pending: this.pendingHooks(),
      dropped: size(path.join(this.o.dir, 'dropped')),
      rejected: this.rejected,
      duplicates: this.duplicates,
      errors: this.errors,
      draining: this.phase === 'initial',
      ...(this.lastError ? { last_error: this.lastError } : {}),
    };
  }

  private kick(): void {
    if (this.kicked || this.phase !== 'live') return;
    this.kicked = true;
    setImmediate(() => {
      this.kicked = false;
      if (this.phase === 'live' && !this.running && this.pendingHooks() > 0) void this.drain();
    });
  }

  private pendingHooks(): number {
    let n = 0;
    try {
      for (const f of readdirSync(this.o.dir)) if (HOOK_FILE.test(f) && !this.done.has(f)) n++;
    } catch {
      /* no spool dir yet: nothing pending */
    }
    return n;
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
    let failures = 0;
    while (this.active) {
      const { hooks, barrier } = await this.list();
      if (hooks.length === 0 && barrier === undefined) break;
      let progressed = false;
      let ok = true;
      let batch: InFlight[] = [];
      let bytes = 0;
      for (const name of hooks) {
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
        failures++;
        await sleep(Math.min(5_000, 50 * 2 ** Math.min(failures, 7)));
        continue;
      }
      failures = 0;
      if (!progressed) await sleep(5);
    }
    if (this.active) this.resetLedger();
  }

  /** The hooks to ingest, in order, and the key of the earliest `.tmp` still being written (start-up only). */
  private async list(): Promise<{ hooks: string[]; barrier: string | undefined }> {
    let names: string[];
    try {
      names = readdirSync(this.o.dir);
    } catch {
      return { hooks: [], barrier: undefined };
    }
    const hooks: string[] = [];
    let barrier: string | undefined;
    for (const f of names) {
      if (HOOK_FILE.test(f)) {
        if (!this.done.has(f)) hooks.push(f);
        continue;
      }
      const tmp = TMP_FILE.exec(f);
      if (!tmp) continue;
      const st = await stat(path.join(this.o.dir, f)).catch(() => undefined);
      const key = `${tmp[1]!}.hook`;
      // gone since the listing: most likely just renamed to its .hook, which this listing did not see; it is a
      // barrier for this pass too, so the next listing takes it in order instead of a later hook overtaking it
      const stale = st !== undefined && Date.now() - st.mtimeMs > this.staleTmpMs;
      if (st && stale) {
        // its shim died mid-write: the partial file is moved aside and counted
        await this.reject(f, 'abandoned partial write', st.size, false);
      } else if (this.phase === 'initial') {
        if (barrier === undefined || key < barrier) barrier = key;
      }
    }
    hooks.sort();
    return { hooks, barrier };
  }

  /**
   * Read, validate and publish one file through the live path. Returns what
   * is in flight, or nothing when the file was rejected, gone, or already in
   * the log. One file in memory at a time.
   */
  private async publish(name: string): Promise<InFlight | undefined> {
    const file = path.join(this.o.dir, name);
    const key = name.slice(0, -'.hook'.length);
    let buf: Buffer;
    try {
      const st = await stat(file);
      if (this.o.seen?.has(key)) {
        this.duplicates++;
        await this.remove([{ name, bytes: st.size }]);
        return undefined;
      }
      if (st.size > this.o.maxBodyBytes + HEADER_MAX) return void (await this.reject(name, 'larger than AEP_MAX_BODY_BYTES', st.size));
      buf = await readFile(file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      this.fail('spool file unreadable', err);
      return void (await this.reject(name, 'unreadable', 0));
    }
    let parsed: ReturnType<typeof decode>;
    try {
      parsed = decode(buf, { maxNodes: this.o.maxBodyNodes ?? DEFAULT_MAX_BODY_NODES, maxDepth: MAX_DEPTH });
    } catch (err) {
      return void (await this.reject(name, err instanceof Rejected ? err.message : 'invalid', buf.length));
    }
    let written: Promise<void>;
    // published from here on (a refusal rejects within this same turn, before any timer can look)
    this.published.add(key);
    try {
      written = this.o.ingest(parsed.raw, parsed.env, { arrival: parsed.arrival, key });
    } catch (err) {
      written = Promise.reject(err);
    }
    written.catch(() => this.published.delete(key));
    return { name, bytes: buf.length, written };
  }

  /** Wait for a batch's events to be written; delete the files whose events are. False if any were not (those stay). */
  private async settle(batch: readonly InFlight[]): Promise<boolean> {
    const results = await Promise.allSettled(batch.map((f) => f.written));
    const done = batch.filter((_, i) => results[i]!.status === 'fulfilled');
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) this.fail('spooled hook not written; kept for a later pass', failed.reason);
    this.ingested += done.length;
    await this.remove(done);
    return failed === undefined;
  }

  private async remove(files: readonly { name: string; bytes: number }[]): Promise<void> {
    if (files.length === 0) return;
    await Promise.all(
      files.map(async (f) => {
        try {
          await unlink(path.join(this.o.dir, f.name));
          this.published.delete(f.name.slice(0, -'.hook'.length));
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
            this.published.delete(f.name.slice(0, -'.hook'.length));
            return;
          }
          this.done.add(f.name);
          this.fail('spool file ingested but not deleted', err);
        }
      }),
    );
    await this.ledgerOut(files);
  }

  /** `counted`: the shims' ledger counts it (a whole `.hook`; a `.tmp` never was) */
  private async reject(name: string, why: string, bytes: number, counted = true): Promise<void> {
    this.rejected++;
    this.o.log.warn('spool file rejected: moved aside', { file: name, reason: why });
    const dir = path.join(this.o.dir, 'rejected');
    try {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      await rename(path.join(this.o.dir, name), path.join(dir, name.replace(/^\./, '')));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      this.done.add(name);
      this.fail('rejected spool file could not be moved aside', err);
    }
    if (counted) await this.ledgerOut([{ bytes }]);
  }

  /** What left the spool, in the units the shims counted it in: one byte per file, one per KiB (rounded up per file). */
  private async ledgerOut(files: readonly { bytes: number }[]): Promise<void> {
    const kib = files.reduce((n, f) => n + Math.ceil(f.bytes / 1024), 0);
    try {
      await appendFile(path.join(this.o.dir, 'out.files'), Buffer.alloc(files.length, 46), { mode: 0o600 });
      if (kib > 0) await appendFile(path.join(this.o.dir, 'out.kib'), Buffer.alloc(kib, 46), { mode: 0o600 });
    } catch (err) {
      this.fail('spool ledger not updated', err);
    }
  }

  /**
   * The spool was just seen empty, so the ledgers are reset to zero: they stay
   * small, and whatever they still counted (a file removed by hand, a failed
   * ledger write, a shim that died between its rename and its count) is
   * forgotten. `in.*` first: in between, the usage reads low, never high, so no
   * shim drops a hook because of the reset. A shim that spools in the same
   * instant can only make the cap a hair lenient.
   */
  private resetLedger(): void {
    if (this.done.size > 0) return;
    const files = ['in.files', 'in.kib', 'out.files', 'out.kib'].map((f) => path.join(this.o.dir, f));
    if (files.every((f) => size(f) === 0)) return;
    for (const f of files) {
      try {
        truncateSync(f, 0);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') this.fail('spool ledger not reset', err);
      }
    }
  }

  /**
   * Keys of spooled hooks whose events were published but whose file is not
   * deleted yet. The start-up snapshot records them: its log offsets cover
   * those events, so after a crash the next start must not ingest them again.
   */
  publishedNotDeleted(): string[] {
    return [...this.published];
  }

  private fail(msg: string, err: unknown): void {
    this.errors++;
    const raw = (err as { code?: unknown } | undefined)?.code;
    const code = typeof raw === 'string' ? raw : 'error';
    // one line per kind of failure, not one per retry pass while the log is down
    if (code !== this.lastError) this.o.log.error(msg, { code });
    this.lastError = code;
  }
}

/**
 * A spool file's bytes → the envelope, validated exactly as a live body is: the
 * same bounded parse (node cap, depth, poison keys: json-body.ts) and schema.
 */
export function decode(
  buf: Buffer,
  limits: ScanLimits = { maxNodes: DEFAULT_MAX_BODY_NODES, maxDepth: MAX_DEPTH },
): { raw: unknown; env: HookEnvelope; arrival: Date } {
  const nl = buf.indexOf(10);
  if (nl < 0 || nl > HEADER_MAX) throw new Rejected('no header line');
  let header: z.infer<typeof headerSchema>;
  try {
    header = headerSchema.parse(JSON.parse(buf.subarray(0, nl).toString('utf8')));
  } catch {
    throw new Rejected('bad header');
  }
  const body = buf.subarray(nl + 1);
  if (body.length !== header.bytes) throw new Rejected('torn: body length differs from the header');
  let raw: unknown;
  try {
    raw = parseBounded(body, limits);
  } catch (err) {
    if (err instanceof BodyRefusal)
      throw new Rejected(
        err.code === 'too_deep'
          ? `body nests deeper than ${MAX_DEPTH} levels`
          : err.code === 'too_many_nodes'
            ? 'more JSON values and keys than AEP_MAX_BODY_NODES'
            : 'body is empty',
      );
    throw new Rejected('body is not valid JSON');
  }
  const env = hookEnvelopeSchema.safeParse(raw);
  if (!env.success) throw new Rejected('not a Hermes hook envelope');
  return { raw, env: env.data, arrival: new Date(header.arrival_ms) };
}

function size(file: string): number {
  return statSync(file, { throwIfNoEntry: false })?.size ?? 0;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());
