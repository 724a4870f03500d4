import PQueue from 'p-queue';

export interface SerialQueueOptions {
  /** tasks waiting or running, at most (past it `add` refuses) */
  readonly maxTasks?: number;
  /** bytes waiting or running, at most; one task is always taken, whatever its size */
  readonly maxBytes?: number;
  /** a task that threw or rejected (it is not retried) */
  readonly onError?: (err: unknown) => void;
}

/**
 * Appends run one at a time, in the order they were added, on p-queue
 * (concurrency 1). Bounded by tasks and bytes: past either `add` refuses and
 * the caller counts the drop. `onIdle()` resolves once every task added so
 * far, and any added meanwhile, has finished.
 */
export class SerialQueue {
  private readonly queue = new PQueue({ concurrency: 1 });
  private readonly maxTasks: number;
  private readonly maxBytes: number;
  private readonly onError: (err: unknown) => void;
  private tasks = 0;
  private bytes = 0;

  constructor(opts: SerialQueueOptions = {}) {
    this.maxTasks = opts.maxTasks ?? Infinity;
    this.maxBytes = opts.maxBytes ?? Infinity;
    this.onError = opts.onError ?? (() => undefined);
  }

  /** tasks waiting or running */
  get pending(): number {
    return this.tasks;
  }

  /** Queue `task` (weighing `bytes`); false, and nothing queued, when the queue is full. */
  add(task: () => Promise<void>, bytes = 0): boolean {
    if (this.tasks >= this.maxTasks || (this.tasks > 0 && this.bytes + bytes > this.maxBytes)) return false;
    this.tasks++;
    this.bytes += bytes;
    void this.queue.add(async () => {
      try {
        await task();
      } catch (err) {
        this.onError(err);
      } finally {
        this.tasks--;
        this.bytes -= bytes;
      }
    });
    return true;
  }

  /** Resolves once nothing is waiting or running. */
  onIdle(): Promise<void> {
    return this.queue.onIdle();
  }
}
