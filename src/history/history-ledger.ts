import type { HistoryFile } from './history-file.js';
import { withSpoolKey, type Entry } from './pending-write.js';

/** a hook whose lines failed this many writes is given up (dropped, counted) */
export const MAX_ATTEMPTS = 5;

/** What became of the lines handed to the history sink: the counts `/healthz` shows, and each hook's answer. */
export class HistoryLedger {
  /**
   * Lines waiting for the disk (retained ones included) and their bytes;
   * lines written; lines whose write failed, held to be written when the
   * history takes writes again; lines given up.
   */
  readonly count = { queued: 0, queuedBytes: 0, written: 0, retained: 0, dropped: 0 };

  /** An entry waits for its file. */
  queue(e: Entry): void {
    this.count.queued += e.lines;
    this.count.queuedBytes += e.buf.length;
  }

  /** An entry is in the file: answer its hook (unless already answered `retained`) and finish it. */
  landed(e: Entry): void {
    this.settled(e, 'written');
  }

  /** An entry is given up: counted as dropped. */
  drop(e: Entry, reason: string): void {
    this.settled(e, 'lost', reason);
  }

  private settled(e: Entry, state: 'written' | 'lost', reason?: string): void {
    this.count.queued -= e.lines;
    this.count.queuedBytes -= e.buf.length;
    if (state === 'written') this.count.written += e.lines;
    else this.count.dropped += e.lines;
    if (e.held) this.count.retained -= e.lines;
    if (!e.answered) e.hook.answer(e.lines, state, reason);
    e.answered = true;
    e.held = false;
    e.hook.finish(e.lines, state === 'written');
  }

  /**
   * A write to `f` failed: its first `failed` entries failed it. Every entry
   * still queued for the file (those, and the ones behind them, which may not
   * overtake them) is answered `retained` and waits for the probe, or is
   * dropped once it has failed MAX_ATTEMPTS times (or at once when `giveUp`: shutdown).
   */
  retain(f: HistoryFile, failed: number, reason: string, giveUp: boolean): void {
    for (let i = 0; i < failed; i++) f.queue[i]!.attempts++;
    const keep: Entry[] = [];
    for (const e of f.queue) {
      // a hook that may not be held (no spool key: its re-delivery could not be told from a new hook) is given up at once
      if (giveUp || e.attempts >= MAX_ATTEMPTS || (!e.answered && !e.hold)) {
        this.drop(e, reason);
        continue;
      }
      if (!e.answered) {
        e.answered = true;
        e.held = true;
        this.count.retained += e.lines;
        // held: its lines will carry its spool key, so the transport's spooled copy is recognised once they land
        if (e.key !== undefined) {
          this.count.queuedBytes -= e.buf.length;
          e.buf = withSpoolKey(e.buf, e.key);
          this.count.queuedBytes += e.buf.length;
        }
        e.hook.answer(e.lines, 'retained', reason);
      }
      keep.push(e);
    }
    f.queue.splice(0, f.queue.length, ...keep);
  }
}
