import type { WriteOutcome } from '../bus/durable-log.js';

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
  /** its lines; re-encoded with the hook's spool key when first held */
  buf: Buffer;
  /** the hook's spool key (`x-hermes-aep-spool-key`), if its transport sent one */
  readonly key?: string;
  /** whether it may be held after a failed write (else it is given up at once: see WriteOptions) */
  readonly hold: boolean;
  readonly lines: number;
  readonly hook: PendingWrite;
  /** failed writes so far */
  attempts: number;
  /** the hook reply was given (written, retained or lost) */
  answered: boolean;
  /** answered `retained`: counted in `retained` until written or dropped */
  held: boolean;
}

const CLOSE = 0x7d; // '}'
const NL = 0x0a;

/**
 * Each line (a JSON object ending in `}\n`) with `"hermesspool":"<key>"` added
 * as its last member: the field spooled hooks' events carry, by which a
 * restart (main.ts `seen`) and the live spool ingest recognise a spool file
 * whose events are already written. The key is a spool file name's stem
 * (digits, `-`, lower-case letters), so it needs no escaping.
 */
export function withSpoolKey(buf: Buffer, key: string): Buffer {
  const field = Buffer.from(`,"hermesspool":${JSON.stringify(key)}}\n`, 'utf8');
  const parts: Buffer[] = [];
  let start = 0;
  for (let nl = buf.indexOf(NL); nl >= 0; nl = buf.indexOf(NL, start)) {
    // a line that is not an object is left as it is (never produced by eventLine)
    if (nl > start && buf[nl - 1] === CLOSE) parts.push(buf.subarray(start, nl - 1), field);
    else parts.push(buf.subarray(start, nl + 1));
    start = nl + 1;
  }
  if (start < buf.length) parts.push(buf.subarray(start));
  return Buffer.concat(parts);
}
