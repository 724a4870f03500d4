import { LRUCache } from 'lru-cache';

/** landed keys remembered at most (the spool's own default file cap) */
export const MAX_LANDED_KEYS = 100_000;

/**
 * Spool keys of live hooks answered 503 because their write failed: their
 * events are held in memory (pending) and written later carrying the key.
 * Once written (landed), the spool re-delivery of that hook is recognised and
 * deleted instead of processed twice; once given up, the key is forgotten and
 * the re-delivery is processed fresh. Bounded: pending keys by the history
 * sink's queue bound, landed keys at MAX_LANDED_KEYS (least recent first out).
 */
export class RetainedKeys {
  private readonly pending = new Map<string, Promise<boolean>>();
  private readonly landed = new LRUCache<string, true>({ max: MAX_LANDED_KEYS });

  /** `written` settles true once the hook's held events are in the history, false if they were given up */
  hold(key: string, written: Promise<boolean>): void {
    const p = written.then(
      (ok) => {
        if (this.pending.get(key) === p) this.pending.delete(key);
        if (ok) this.landed.set(key, true);
        return ok;
      },
      () => {
        if (this.pending.get(key) === p) this.pending.delete(key);
        return false;
      },
    );
    this.pending.set(key, p);
  }

  /** whether the hook of `key` is already written (true), still held (its promise: true once written), or unknown (undefined) */
  state(key: string): true | Promise<boolean> | undefined {
    if (this.landed.has(key)) return true;
    return this.pending.get(key);
  }

  /** its spool re-delivery was dropped: nothing will ask again */
  consume(key: string): void {
    this.landed.delete(key);
  }

  /** keys whose events are in the history but whose spool file may not be deleted yet (the snapshot records them) */
  landedKeys(): string[] {
    return [...this.landed.keys()];
  }

  get size(): { pending: number; landed: number } {
    return { pending: this.pending.size, landed: this.landed.size };
  }
}
