import { open, readFile, type FileHandle } from 'node:fs/promises';
import { replaceDurably } from '../../util/durable-file.js';
import { APPEND_ONLY_NOFOLLOW } from '../../util/private-path.js';

/**
 * The delivery ids a webhook receiver has accepted, so a delivery Hermes
 * sends twice (its retry after a lost answer) or anyone replays is answered
 * without being processed again, across restarts too.
 *
 * Only ids that could still pass the time window are worth keeping: a
 * delivery whose `timestamp` is older than the window is refused as stale
 * before the ledger is asked. So an id is kept while its delivery's own time
 * is within the window, and at most `cap` of them (the oldest go first,
 * counted as `evicted`: a replay of one of those within the window would be
 * processed again).
 *
 * On disk: `{stateDir}/webhook-deliveries`, one `<ms> <id>` line per accepted
 * delivery, appended (0600, never through a symlink); rewritten whole
 * (durably: temp file, fsync, rename) with the live ids once as many lines
 * were appended since the last rewrite as the cap, so the file holds at most
 * twice the cap. A torn or foreign line is skipped when it is read back.
 */
export interface DeliveryLedgerOptions {
  readonly file: string;
  readonly windowMs: number;
  /** ids kept at most (DEFAULT_LEDGER_CAP) */
  readonly cap?: number;
  readonly now?: () => number;
}

/** 50,000 ids: some 170 deliveries a second for a 5-minute window, about 2.5 MB on disk at most. */
export const DEFAULT_LEDGER_CAP = 50_000;

const LINE = /^(\d{1,15}) ([0-9A-Za-z_-]{1,128})$/;

export class DeliveryLedger {
  /** id → the delivery's own time (ms); insertion order is acceptance order */
  private readonly ids = new Map<string, number>();
  private readonly cap: number;
  private readonly now: () => number;
  private fh: FileHandle | undefined;
  private appended = 0;
  /** appends and rewrites, one after another */
  private tail: Promise<void> = Promise.resolve();
  /** ids given up to the cap while still within the window */
  evicted = 0;
  /** lines of the file that were not `<ms> <id>` when it was read back */
  skipped = 0;
  /** appends or rewrites that failed (the id is still kept in memory) */
  writeFailures = 0;

  constructor(private readonly o: DeliveryLedgerOptions) {
    this.cap = Math.max(1, o.cap ?? DEFAULT_LEDGER_CAP);
    this.now = o.now ?? Date.now;
  }

  /** Read the file back (missing: empty), keeping the ids still within the window, then rewrite it with those. */
  async load(): Promise<void> {
    let text = '';
    try {
      text = await readFile(this.o.file, 'latin1');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    for (const line of text.split('\n')) {
      if (line === '') continue;
      const m = LINE.exec(line);
      if (!m) {
        this.skipped++;
        continue;
      }
      this.remember(m[2]!, Number(m[1]));
    }
    this.prune();
    // nothing on disk yet: the file is made by the first accepted delivery
    if (text !== '') await this.rewrite();
  }

  /** Whether this id was accepted and its delivery is still within the window. */
  has(id: string): boolean {
    const at = this.ids.get(id);
    return at !== undefined && !this.expired(at);
  }

  get size(): number {
    return this.ids.size;
  }

  /** Record an accepted delivery; resolves once its line was handed to the OS (or its write failed, counted). */
  add(id: string, at: number): Promise<void> {
    this.remember(id, at);
    this.prune();
    const line = `${at} ${id}\n`;
    return this.serial(async () => {
      this.fh ??= await open(this.o.file, APPEND_ONLY_NOFOLLOW, 0o600);
      await this.fh.appendFile(line, 'latin1');
      if (++this.appended >= this.cap) await this.rewrite();
    });
  }

  async close(): Promise<void> {
    await this.tail;
    await this.fh?.close().catch(() => undefined);
    this.fh = undefined;
  }

  private expired(at: number): boolean {
    return at < this.now() - this.o.windowMs;
  }

  private remember(id: string, at: number): void {
    this.ids.delete(id);
    this.ids.set(id, at);
    while (this.ids.size > this.cap) {
      const oldest = this.ids.entries().next().value!;
      this.ids.delete(oldest[0]);
      if (!this.expired(oldest[1])) this.evicted++;
    }
  }

  /** Drop expired ids from the front (acceptance order is close to time order; the cap bounds the rest). */
  private prune(): void {
    for (const [id, at] of this.ids) {
      if (!this.expired(at)) break;
      this.ids.delete(id);
    }
  }

  private async rewrite(): Promise<void> {
    await this.fh?.close().catch(() => undefined);
    this.fh = undefined;
    const text = [...this.ids].map(([id, at]) => `${at} ${id}\n`).join('');
    await replaceDurably(this.o.file, async (fh) => {
      await fh.writeFile(text, 'latin1');
    });
    this.appended = 0;
  }

  private serial(task: () => Promise<void>): Promise<void> {
    const run = this.tail.then(task).catch(() => {
      this.writeFailures++;
    });
    this.tail = run;
    return run;
  }
}
