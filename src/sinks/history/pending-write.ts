import type { WriteOutcome } from '../sink.js';

/**
 * One `write` call's fate, across the files it touched: answered once (the
 * hook reply) when every part is written, retained or lost; finished once
 * every part is written or lost.
 */
export class PendingWrite {
  private written = 0;
  private retained = 0;
  private lost = 0;
  private finalWritten = 0;
  private finalLost = 0;
  private reason: string | undefined;
  private resolveFinal: ((v: { written: number; lost: number }) => void) | undefined;

  constructor(
    private unanswered: number,
    private unfinished: number,
    private readonly reply: (o: WriteOutcome) => void,
  ) {}

  answer(lines: number, state: 'written' | 'retained' | 'lost', reason?: string): void {
    if (state === 'written') this.written += lines;
    else if (state === 'retained') this.retained += lines;
    else this.lost += lines;
    this.reason ??= reason;
    if (--this.unanswered > 0) return;
    const final = this.retained > 0 ? new Promise<{ written: number; lost: number }>((r) => (this.resolveFinal = r)) : undefined;
    this.reply({
      written: this.written,
      retained: this.retained,
      lost: this.lost,
      ...(this.reason ? { reason: this.reason } : {}),
      ...(final ? { final } : {}),
    });
    this.maybeFinish();
  }

  finish(lines: number, written: boolean): void {
    if (written) this.finalWritten += lines;
    else this.finalLost += lines;
    this.unfinished--;
    this.maybeFinish();
  }

  private maybeFinish(): void {
    if (this.unfinished === 0 && this.unanswered === 0) this.resolveFinal?.({ written: this.finalWritten, lost: this.finalLost });
  }
}

/** One hook's lines for one file: written whole or not at all. */
export interface Entry {
  readonly buf: Buffer;
  readonly lines: number;
  readonly hook: PendingWrite;
  /** failed writes so far */
  attempts: number;
  /** the hook reply was given (written, retained or lost) */
  answered: boolean;
  /** answered `retained`: counted in `retained` until written or dropped */
  held: boolean;
}
