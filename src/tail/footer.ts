/**
 * The one-line footer `tail` keeps under the events on a terminal while
 * answerable cards are pending: each card's full id and its time left,
 * refreshed about once a second, gone when none is pending. Every line
 * printed (events on stdout, notices on stderr) goes through it: the footer
 * is erased (`CR`, erase-line), the line written, the footer drawn again
 * without a newline, cut to the terminal's width so it never wraps. Only on
 * a terminal, never with `--json` (the caller decides); styled like every
 * other line, so `NO_COLOR` leaves only the two cursor controls.
 */
import type { Styler } from './color.js';
import { clean } from './facts.js';
import { timeLeft, type PendingCards } from './cards.js';

/** Where the footer is drawn: the terminal stdout is. */
export interface Terminal {
  write(text: string): void;
  /** the terminal's width (undefined: 80) */
  columns(): number | undefined;
}

/** Carriage return, then erase the whole line: the cursor is back at the start of an empty line. */
export const ERASE = '\r\u001b[2K';

const SEPARATOR = ' · ';

export class Footer {
  private shown = '';
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly term: Terminal,
    private readonly cards: PendingCards,
    private readonly style: Styler,
    private readonly now: () => number = Date.now,
    private readonly tickMs = 1_000,
  ) {}

  /** Write one line above the footer (`write` adds nothing: the newline is added here). */
  print(write: (line: string) => void, line: string): void {
    this.erase();
    write(line);
    this.draw();
  }

  /** The footer's text now (styled), or '' when no card is pending. */
  text(): string {
    const now = this.now();
    const cards = this.cards.pending(now);
    if (cards.length === 0) return '';
    // a terminal that reports no width (0: a pty nobody sized) is taken as 80 columns
    const width = Math.max(20, (this.term.columns() || 80) - 1);
    const label = `${cards.length} pending: `;
    let used = label.length;
    const parts: string[] = [];
    for (let i = 0; i < cards.length; i++) {
      const c = cards[i]!;
      const left = timeLeft(c, now);
      const plain = `${clean(c.id, 80)}${left !== undefined ? ` ${left}` : ''}`;
      const more = i < cards.length - 1 ? SEPARATOR.length + `+${cards.length - i - 1} more`.length : 0;
      const sep = parts.length > 0 ? SEPARATOR.length : 0;
      if (used + sep + plain.length + more > width) {
        // too narrow for even one card: the first one, cut
        if (i === 0) parts.push(this.style('attention', clean(plain, width - used)));
        // what does not fit is counted (room for it was kept when the previous card was placed)
        else parts.push(this.style('dim', `+${cards.length - i} more`));
        break;
      }
      used += sep + plain.length;
      const id = this.style('attention', clean(c.id, 80));
      parts.push(left === undefined ? id : `${id} ${this.style(left === 'expired' ? 'failure' : 'warning', left)}`);
    }
    return this.style('attention', label) + parts.join(this.style('dim', SEPARATOR));
  }

  /** Draw the footer as it is now (nothing when unchanged); keep the refresh running while cards are pending. */
  draw(): void {
    const text = this.text();
    if (text !== this.shown) {
      this.term.write(text === '' ? ERASE : `${ERASE}${text}`);
      this.shown = text;
    }
    if (text !== '' && this.timer === undefined) {
      this.timer = setInterval(() => this.draw(), this.tickMs);
      this.timer.unref();
    } else if (text === '' && this.timer !== undefined) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  /** Remove the footer from the screen (it is drawn again by the next `print` or `draw`). */
  erase(): void {
    if (this.shown === '') return;
    this.term.write(ERASE);
    this.shown = '';
  }

  /** Stop refreshing and leave an empty line (the tail is over). */
  close(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.erase();
  }
}
