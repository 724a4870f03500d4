/**
 * `tail`'s recent context, like tail(1)'s last lines: the events a replay
 * brings are held back, only the last `n` kept, until the replay is over;
 * then those are printed (oldest first) and what follows is printed as it
 * comes. An event pushed out of the window is still observed (deduped, its
 * position remembered, a card or a gate deny noted) so what is printed later
 * reads the same as if everything had been shown.
 */

type Ev = Readonly<Record<string, unknown>>;

export interface RecentSink {
  print(event: Ev, line: string): void;
  /** taken into account, not printed */
  observe(event: Ev): void;
}

interface Held {
  readonly event: Ev;
  readonly line: string;
  readonly key: number;
  readonly n: number;
}

/** the order of a history line: its time (files are read one after another, not in time order) */
export function timeKey(event: Ev): number {
  const t = typeof event['time'] === 'string' ? Date.parse(event['time']) : NaN;
  return Number.isNaN(t) ? 0 : t;
}

export class RecentWindow {
  private held: Held[] = [];
  private arrivals = 0;
  private open = true;

  /** `key` orders the window (default: arrival order, as a stream replays) */
  constructor(
    private readonly n: number,
    private readonly sink: RecentSink,
    private readonly key: (event: Ev) => number = () => 0,
  ) {}

  /** still holding back (the replay not over yet) */
  get holding(): boolean {
    return this.open;
  }

  add(event: Ev, line: string): void {
    if (!this.open) return this.sink.print(event, line);
    const h = { event, line, key: this.key(event), n: this.arrivals++ };
    // insert in (key, arrival) order; nearly always at the end
    let i = this.held.length;
    while (i > 0 && before(h, this.held[i - 1]!)) i--;
    this.held.splice(i, 0, h);
    if (this.held.length > this.n) this.sink.observe(this.held.shift()!.event);
  }

  /** The replay is over: print what is kept; from now on events pass straight through. */
  flush(): void {
    if (!this.open) return;
    this.open = false;
    const held = this.held;
    this.held = [];
    for (const h of held) this.sink.print(h.event, h.line);
  }
}

const before = (a: Held, b: Held) => a.key < b.key || (a.key === b.key && a.n < b.n);
