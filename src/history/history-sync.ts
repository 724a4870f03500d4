import { open, type FileHandle } from 'node:fs/promises';
import path from 'node:path';

/**
 * Changes to one file (or directory) and how many of them the last finished
 * fsync covered. One fsync runs at a time; callers that need their changes on
 * the disk share it, or start the next one.
 */
export class SyncPoint {
  /** changes so far */
  gen = 0;
  /** how many of them the last finished fsync covered */
  synced = 0;
  private running: Promise<boolean> | undefined;

  get dirty(): boolean {
    return this.gen > this.synced;
  }

  get busy(): boolean {
    return this.running !== undefined;
  }

  /** Settles once the fsync in flight, if any, is over. */
  async idle(): Promise<void> {
    await this.running;
  }

  /**
   * Resolve true once every change counted before this call is on the disk,
   * false if an fsync failed. `sync` runs one fsync (false when it failed),
   * or returns undefined when there is nothing to sync with any more.
   */
  async settle(sync: () => Promise<boolean> | undefined): Promise<boolean> {
    const target = this.gen;
    while (this.synced < target) {
      if (!this.running) {
        const gen = this.gen;
        const started = sync();
        if (!started) return true;
        const p: Promise<boolean> = started.then((ok) => {
          if (ok) this.synced = Math.max(this.synced, gen);
          if (this.running === p) this.running = undefined;
          return ok;
        });
        this.running = p;
      }
      if (!(await this.running)) return false;
    }
    return true;
  }
}

/** A file that takes fdatasyncs: its handle while open, and its changes. */
export interface Syncable {
  readonly handle: FileHandle | undefined;
  readonly sync: SyncPoint;
}

/**
 * The history's fsyncs: a file's writes (fdatasync), and the directory once a
 * file was created in it (a new file's directory entry must reach the disk
 * too, or a power loss can drop the whole file).
 */
export class HistorySync {
  fsyncs = 0;
  /** files created, and how many of them the last directory fsync covered */
  readonly dir = new SyncPoint();
  /** the directories whose entries changed since the last directory fsync (the sink's own when none is named) */
  private readonly dirs = new Set<string>();

  constructor(
    private readonly path: string,
    private readonly outcome: (err?: unknown) => void,
  ) {}

  /** One fdatasync; false (reported to `outcome`) when it failed. */
  async datasync(handle: FileHandle): Promise<boolean> {
    try {
      await handle.datasync();
      this.fsyncs++;
      this.outcome();
      return true;
    } catch (err) {
      this.outcome(err);
      return false;
    }
  }

  /** Resolve once every write to `f` that landed before this call is on the disk (or the fsync failed, counted). */
  async file(f: Syncable): Promise<void> {
    if (await f.sync.settle(() => (f.handle ? this.datasync(f.handle) : undefined))) await this.directory();
  }

  /** The periodic fdatasync: every file written since the last one, and the directory if a file was created. */
  all(files: Iterable<Syncable>): void {
    for (const f of files) if (f.handle && f.sync.dirty && !f.sync.busy) void this.file(f);
    void this.directory();
  }

  /** A file (or directory) was created: its parent directory's entry must reach the disk. */
  created(file: string): void {
    this.dirs.add(path.dirname(file));
    this.dir.gen++;
  }

  async directory(): Promise<void> {
    await this.dir.settle(async () => {
      const dirs = this.dirs.size > 0 ? [...this.dirs] : [this.path];
      this.dirs.clear();
      try {
        for (const dir of dirs) {
          const d = await open(dir, 'r');
          try {
            await d.sync();
          } finally {
            await d.close();
          }
        }
        return true;
      } catch {
        for (const dir of dirs) this.dirs.add(dir);
        return false;
      }
    });
  }
}
