import { closeSync, openSync, readdirSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { mkdir, rename, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../core/logger.js';
import { DROP_MARK, HOOK_FILE, TMP_FILE } from './spool-format.js';
import { APPEND_ONLY_NOFOLLOW, appendPrivate, truncatePrivateSync } from '../util/private-path.js';

/** A spool file on its way out, and its size (the ledgers count it). */
export interface SpoolFile {
  readonly name: string;
  readonly bytes: number;
}

/**
 * The spool directory as the daemon handles it (layout: spool-format.ts):
 * listing it in arrival order, deleting ingested files, moving rejected ones
 * aside, and the `out.*` side of the cap's ledgers. Failures are counted and
 * logged once per kind, never thrown.
 */
export class SpoolDir {
  rejected = 0;
  errors = 0;
  lastError: string | undefined;
  /** ingested or rejected, but could not be removed: never ingested twice by this process */
  readonly done = new Set<string>();
  /** spool keys whose events were published and whose file is not deleted yet (see publishedNotDeleted) */
  readonly published = new Set<string>();

  constructor(
    readonly dir: string,
    private readonly log: Logger,
  ) {}

  /** `.hook` files waiting (cheap when the spool is empty: one readdir). */
  pendingHooks(): number {
    let n = 0;
    try {
      for (const f of readdirSync(this.dir)) if (HOOK_FILE.test(f) && !this.done.has(f)) n++;
    } catch {
      /* no spool dir yet: nothing pending */
    }
    return n;
  }

  /**
   * The hooks to ingest, in order, and (at start-up: `initial`) the key of the
   * earliest `.tmp` a shim is still writing, which no later hook may overtake.
   * A `.tmp` untouched for `staleTmpMs` belongs to a shim that died mid-write: moved aside.
   */
  async list(initial: boolean, staleTmpMs: number): Promise<{ hooks: string[]; barrier: string | undefined }> {
    let names: string[];
    try {
      names = readdirSync(this.dir);
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
      const st = await stat(path.join(this.dir, f)).catch(() => undefined);
      const key = `${tmp[1]!}.hook`;
      // gone since the listing: most likely just renamed to its .hook, which this listing did not see; it is a
      // barrier for this pass too, so the next listing takes it in order instead of a later hook overtaking it
      const stale = st !== undefined && Date.now() - st.mtimeMs > staleTmpMs;
      if (st && stale) {
        // its shim died mid-write: the partial file is moved aside and counted
        await this.reject(f, 'abandoned partial write', st.size, false);
      } else if (initial) {
        if (barrier === undefined || key < barrier) barrier = key;
      }
    }
    hooks.sort();
    return { hooks, barrier };
  }

  /** Delete files whose events are written, and count them out of the ledgers. */
  async remove(files: readonly SpoolFile[]): Promise<void> {
    if (files.length === 0) return;
    await Promise.all(
      files.map(async (f) => {
        try {
          await unlink(path.join(this.dir, f.name));
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
            this.done.add(f.name);
            this.fail('spool file ingested but not deleted', err);
            return;
          }
        }
        this.published.delete(f.name.slice(0, -'.hook'.length));
      }),
    );
    await this.ledgerOut(files);
  }

  /** Move a file aside to `rejected/`. `counted`: the shims' ledger counts it (a whole `.hook`; a `.tmp` never was). */
  async reject(name: string, why: string, bytes: number, counted = true): Promise<void> {
    this.rejected++;
    this.log.warn('spool file rejected: moved aside', { file: name, reason: why });
    const dir = path.join(this.dir, 'rejected');
    try {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      await rename(path.join(this.dir, name), path.join(dir, name.replace(/^\./, '')));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      this.done.add(name);
      this.fail('rejected spool file could not be moved aside', err);
    }
    if (counted) await this.ledgerOut([{ name, bytes }]);
  }

  /** What left the spool, in the units the shims counted it in: one byte per file, one per KiB (rounded up per file). */
  private async ledgerOut(files: readonly SpoolFile[]): Promise<void> {
    const kib = files.reduce((n, f) => n + Math.ceil(f.bytes / 1024), 0);
    try {
      await appendPrivate(path.join(this.dir, 'out.files'), Buffer.alloc(files.length, 46));
      if (kib > 0) await appendPrivate(path.join(this.dir, 'out.kib'), Buffer.alloc(kib, 46));
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
  resetLedger(): void {
    if (this.done.size > 0) return;
    const files = ['in.files', 'in.kib', 'out.files', 'out.kib'].map((f) => path.join(this.dir, f));
    if (files.every((f) => size(f) === 0)) return;
    for (const f of files) {
      try {
        truncatePrivateSync(f);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') this.fail('spool ledger not reset', err);
      }
    }
  }

  /** hooks the shims dropped (spool full, disk error): one byte each in `dropped`, plus one empty `dropped.<key>` each (a full disk) */
  dropped(): number {
    return size(path.join(this.dir, 'dropped')) + this.dropMarks().length;
  }

  /**
   * The `dropped.<key>` files a shim made when not even a byte could be appended to `dropped` (a full disk): folded
   * into `dropped` (a byte each) and removed, so they do not pile up. Synchronous: no reading of the count sees a
   * marker counted twice. A marker not removed after its byte was appended is counted twice (a crash right here).
   */
  foldDropMarks(): void {
    const marks = this.dropMarks();
    if (marks.length === 0) return;
    try {
      // never through a planted symlink (O_NOFOLLOW), as every other spool ledger write
      const fd = openSync(path.join(this.dir, 'dropped'), APPEND_ONLY_NOFOLLOW, 0o600);
      try {
        writeSync(fd, Buffer.alloc(marks.length, 46));
      } finally {
        closeSync(fd);
      }
    } catch (err) {
      this.fail('dropped-hook markers not folded', err);
      return;
    }
    for (const m of marks) {
      try {
        unlinkSync(path.join(this.dir, m));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') this.fail('dropped-hook marker not removed', err);
      }
    }
  }

  private dropMarks(): string[] {
    try {
      return readdirSync(this.dir).filter((f) => DROP_MARK.test(f));
    } catch {
      return [];
    }
  }

  fail(msg: string, err: unknown): void {
    this.errors++;
    const raw = (err as { code?: unknown } | undefined)?.code;
    const code = typeof raw === 'string' ? raw : 'error';
    // one line per kind of failure, not one per retry pass while the log is down
    if (code !== this.lastError) this.log.error(msg, { code });
    this.lastError = code;
  }
}

function size(file: string): number {
  return statSync(file, { throwIfNoEntry: false })?.size ?? 0;
}
