/**
 * What `tail` does with each event line, whichever path brought it: drop a
 * duplicate (AEP-0001 §7.4, dedupe on `(source, id)` over a bounded window:
 * a reconnect may replay what was already shown), remember the session's
 * last position (the resume point of the next reconnect), and print it as
 * the raw line (`--json`) or one rendered line (with, for an answerable
 * card, its id and time left, and for its outcome how it ended).
 */
import { renderEvent } from './render.js';
import type { Styler } from './color.js';
import { noteParts, type PendingCards } from './cards.js';
import { GateDenials } from './gate-denials.js';
import { comparePosition, type Position } from '../aep/wire.js';

const DEDUPE_WINDOW = 10_000;
/** positions kept for a reconnect's `from` (the daemon refuses more than it holds sessions) */
export const MAX_POSITIONS = 64;

export interface PrinterIo {
  readonly out: (line: string) => void;
  readonly style: Styler;
  readonly json: boolean;
  /** rendered lines only: the answerable cards followed */
  readonly cards?: PendingCards;
  readonly now?: () => number;
}

export class Printer {
  private readonly seen = new Map<string, true>();
  private readonly positions = new Map<string, Position>();
  private readonly gates = new GateDenials();
  lastEventId: string | undefined;

  constructor(
    private readonly io: PrinterIo,
    start: readonly Position[] = [],
  ) {
    for (const p of start) this.remember(p);
  }

  /** the last position of up to MAX_POSITIONS most recently active sessions */
  resumePositions(): Position[] {
    return [...this.positions.values()];
  }

  /** the last position printed for a session */
  positionOf(session: string): Position | undefined {
    return this.positions.get(session);
  }

  private remember(p: Position): void {
    const old = this.positions.get(p.session);
    this.positions.delete(p.session);
    // a redelivered older event never moves the resume point back
    this.positions.set(p.session, old !== undefined && comparePosition(old, p) > 0 ? old : p);
    if (this.positions.size > MAX_POSITIONS) this.positions.delete(this.positions.keys().next().value!);
  }

  /** Dedupe and the resume point; false when it was a duplicate. */
  private take(event: Readonly<Record<string, unknown>>): boolean {
    const key = `${String(event['source'])}\u0000${String(event['id'])}`;
    if (this.seen.has(key)) return false;
    this.seen.set(key, true);
    if (this.seen.size > DEDUPE_WINDOW) this.seen.delete(this.seen.keys().next().value!);
    const session = event['session'];
    const seq = event['seq'];
    if (typeof session === 'string' && Number.isSafeInteger(seq)) {
      const epoch = Number.isSafeInteger(event['epoch']) ? (event['epoch'] as number) : 0;
      this.remember({ session, epoch, seq: seq as number });
    }
    return true;
  }

  /** Take one event into account without printing it (before the recent context shown): dedupe, position, cards, gate denies. */
  observe(event: Readonly<Record<string, unknown>>): void {
    if (!this.take(event) || this.io.json) return;
    this.io.cards?.observe(event, (this.io.now ?? Date.now)());
    this.gates.observe(event);
  }

  /** Print one event (parsed `event`, its wire `line`); false when it was a duplicate. */
  print(event: Readonly<Record<string, unknown>>, line: string): boolean {
    if (!this.take(event)) return false;
    if (this.io.json) {
      this.io.out(line);
      return true;
    }
    const now = (this.io.now ?? Date.now)();
    const note = this.io.cards?.observe(event, now);
    const gateDenial = this.gates.observe(event);
    this.io.out(
      renderEvent(event, this.io.style, note !== undefined ? noteParts(note, now, this.io.style) : [], gateDenial !== undefined ? { gateDenial } : {}),
    );
    return true;
  }
}
