import { mkdir, type open } from 'node:fs/promises';
import path from 'node:path';
import { LRUCache } from 'lru-cache';
import type { Logger } from '../core/logger.js';
import { ensurePrivateDir, NotPrivateError } from '../util/private-path.js';
import { outOfDescriptors, processPoolBound } from './fd-limit.js';
import { openForAppend, type HistoryFile } from './history-file.js';
import type { HistorySync } from './history-sync.js';

export { MAX_OPEN_FILES } from './fd-limit.js';

/**
 * The history files' open handles, at most `max` of them in an lru-cache (by
 * default a quarter of the process's descriptor limit, at most
 * MAX_OPEN_FILES): opening one more evicts the least recently written, whose
 * handle is closed (synced first, so the power-loss bound holds) at once if
 * its file is idle, else by its write loop between two groups. An open that
 * finds the process out of descriptors (EMFILE, ENFILE) closes the idle
 * handles and tries once more.
 */
export class HandlePool {
  /** handles open now (evicted ones still in use included) */
  open = 0;
  /** torn tails cut back at open */
  repaired = 0;
  /** opens refused: a file or directory not private to this user, or a symlink (nothing written to it) */
  refused = 0;
  /** idle handles closed because an open ran out of descriptors */
  shed = 0;
  readonly max: number;
  private readonly lru: LRUCache<string, HistoryFile>;
  private readonly closing = new Set<Promise<void>>();
  /** opens under way (a reserved slot) */
  private opening = 0;
  /** opens waiting for a slot */
  private readonly waiters: (() => void)[] = [];

  constructor(
    private readonly dir: string,
    private readonly openFn: typeof open,
    private readonly log: Logger,
    private readonly sync: HistorySync,
    /** an idle file lost its handle: forget it unless lines wait for it */
    private readonly released: (f: HistoryFile) => void,
    max: number = processPoolBound(),
  ) {
    this.max = max;
    this.lru = new LRUCache<string, HistoryFile>({
      max,
      // after the eviction is complete (a plain `dispose` runs mid-operation, when the cache may not be touched)
      disposeAfter: (f, _path, reason) => {
        if (reason === 'evict') this.evicted(f);
      },
    });
  }

  /** `f` is written to now: its handle becomes the most recent. */
  touch(f: HistoryFile): void {
    if (f.handle && !f.evicted) this.lru.get(f.path);
  }

  /**
   * Open `f` for append; a file that ends in a torn line (a crash or power loss mid-write) is cut back first.
   * Throws NotPrivateError (counted in `refused`, nothing written) for a file or directory another user owns or may
   * write, or a symlink in the file's place.
   */
  async acquire(f: HistoryFile): Promise<void> {
    const dir = path.dirname(f.path);
    const made = await mkdir(dir, { recursive: true, mode: 0o700 });
    // a directory made below the sink's own (a foreign agent's): its entry must reach the disk too
    if (made !== undefined && dir !== this.dir) this.sync.created(dir);
    await this.slot();
    let o;
    try {
      o = await this.refusing(async () => {
        await ensurePrivateDir(dir, { follow: dir === this.dir });
        try {
          return await openForAppend(this.openFn, f.path);
        } catch (err) {
          if (!outOfDescriptors(err) || this.shedIdle() === 0) throw err;
          await Promise.allSettled([...this.closing]);
          return openForAppend(this.openFn, f.path);
        }
      });
    } finally {
      this.opening--;
      this.wake();
    }
    if (o.created) this.sync.created(f.path);
    if (o.repaired > 0) {
      this.repaired++;
      this.log.warn('a session log ended in a torn line: cut back to its last complete line', { bytes: o.repaired });
    }
    f.handle = o.handle;
    f.id = o.id;
    f.size = o.size;
    f.evicted = false;
    this.open++;
    this.lru.set(f.path, f);
  }

  /**
   * Wait until one more handle fits under the bound (open, opening and still
   * closing ones all count), then reserve it: an idle handle is closed to make
   * room; with none idle, the least recently written file in use is asked to
   * give its handle back at its next group boundary, and the open waits.
   */
  private async slot(): Promise<void> {
    while (this.open + this.opening + this.closing.size >= this.max) {
      const idle = this.leastRecent((f) => !f.pumping);
      if (idle) {
        this.release(idle);
        this.released(idle);
        // its close is under way (it counts until done): wait for it below like any other
      } else {
        const busy = this.leastRecent((f) => !f.evicted);
        if (busy) busy.evicted = true;
      }
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
    this.opening++;
  }

  private leastRecent(pred: (f: HistoryFile) => boolean): HistoryFile | undefined {
    for (const f of this.lru.rvalues()) if (f !== undefined && f.handle && pred(f)) return f;
    return undefined;
  }

  /** A handle was closed or an open ended: the waiting opens look again. */
  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  /** Run an open; a refusal (not private, or a symlink: ELOOP under O_NOFOLLOW) is counted, and said once. */
  private async refusing<T>(opening: () => Promise<T>): Promise<T> {
    try {
      return await opening();
    } catch (err) {
      const refusal = err instanceof NotPrivateError || (err as NodeJS.ErrnoException).code === 'ELOOP';
      if (!refusal) throw err;
      if (this.refused++ === 0) {
        // no session id in the line: the directory and why (later ones are counted in /healthz sinks.log.refused_files)
        const why = err instanceof NotPrivateError ? err.why : 'a symlink';
        this.log.warn('a session log was refused: it is not a private file of this user; its events are dropped (counted)', { dir: this.dir, reason: why });
      }
      throw err instanceof NotPrivateError ? err : new NotPrivateError(String((err as NodeJS.ErrnoException).path ?? this.dir), 'a symlink', 'remove it');
    }
  }

  /** Out of descriptors: close every idle handle (no write loop on it), least recently written first; how many. */
  private shedIdle(): number {
    const idle = [...this.lru.rvalues()].filter((f): f is HistoryFile => f !== undefined && !f.pumping);
    for (const f of idle) {
      this.release(f);
      this.released(f);
    }
    this.shed += idle.length;
    return idle.length;
  }

  private evicted(f: HistoryFile): void {
    f.evicted = true;
    if (f.pumping) return;
    this.release(f);
    this.released(f);
  }

  /** Close `f`'s handle, once its fdatasync in flight is over and its last writes synced. */
  release(f: HistoryFile): void {
    const handle = f.handle;
    f.evicted = false;
    if (!handle) return;
    f.handle = undefined;
    this.open--;
    this.lru.delete(f.path);
    const closed = (async () => {
      await f.sync.idle();
      if (f.sync.dirty) await this.sync.datasync(handle);
      await handle.close();
    })().catch(() => undefined);
    this.closing.add(closed);
    void closed.finally(() => {
      this.closing.delete(closed);
      this.wake();
    });
  }

  /** Close every handle; resolves once all are closed. */
  async releaseAll(files: Iterable<HistoryFile>): Promise<void> {
    for (const f of files) this.release(f);
    await Promise.allSettled([...this.closing]);
  }
}
