import { mkdir, type open } from 'node:fs/promises';
import path from 'node:path';
import { LRUCache } from 'lru-cache';
import type { Logger } from '../../daemon/diagnostics.js';
import { openForAppend, type HistoryFile } from './history-file.js';
import type { HistorySync } from './history-sync.js';

/** handles kept open (least recently written closed first) */
export const MAX_OPEN_FILES = 256;

/**
 * The history files' open handles, at most MAX_OPEN_FILES of them in an
 * lru-cache: opening one more evicts the least recently written, whose handle
 * is closed (synced first, so the power-loss bound holds) at once if its file
 * is idle, else by its write loop between two groups.
 */
export class HandlePool {
  /** handles open now (evicted ones still in use included) */
  open = 0;
  /** torn tails cut back at open */
  repaired = 0;
  private readonly lru = new LRUCache<string, HistoryFile>({
    max: MAX_OPEN_FILES,
    // after the eviction is complete (a plain `dispose` runs mid-operation, when the cache may not be touched)
    disposeAfter: (f, _path, reason) => {
      if (reason === 'evict') this.evicted(f);
    },
  });
  private readonly closing = new Set<Promise<void>>();

  constructor(
    private readonly dir: string,
    private readonly openFn: typeof open,
    private readonly log: Logger,
    private readonly sync: HistorySync,
    /** an idle file lost its handle: forget it unless lines wait for it */
    private readonly released: (f: HistoryFile) => void,
  ) {}

  /** `f` is written to now: its handle becomes the most recent. */
  touch(f: HistoryFile): void {
    if (f.handle && !f.evicted) this.lru.get(f.path);
  }

  /** Open `f` for append; a file that ends in a torn line (a crash or power loss mid-write) is cut back first. */
  async acquire(f: HistoryFile): Promise<void> {
    const dir = path.dirname(f.path);
    const made = await mkdir(dir, { recursive: true, mode: 0o700 });
    // a directory made below the sink's own (a foreign agent's): its entry must reach the disk too
    if (made !== undefined && dir !== this.dir) this.sync.created(dir);
    const o = await openForAppend(this.openFn, f.path);
    if (o.created) this.sync.created(f.path);
    if (o.repaired > 0) {
      this.repaired++;
      this.log.warn('a session log ended in a torn line: cut back to its last complete line', { bytes: o.repaired });
    }
    f.handle = o.handle;
    f.size = o.size;
    f.evicted = false;
    this.open++;
    this.lru.set(f.path, f);
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
    void closed.finally(() => this.closing.delete(closed));
  }

  /** Close every handle; resolves once all are closed. */
  async releaseAll(files: Iterable<HistoryFile>): Promise<void> {
    for (const f of files) this.release(f);
    await Promise.allSettled([...this.closing]);
  }
}
