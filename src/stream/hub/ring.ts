import type { WireEvent } from '../../aep/wire.js';

/** One held event: its arrival number across the whole buffer (replay order) and its line's size. */
export interface Held {
  readonly w: WireEvent;
  readonly n: number;
  readonly bytes: number;
}

/**
 * The events one session (or the agent-scoped lane) holds, oldest arrival
 * first: a queue with an advancing head, compacted now and then. It is also
 * a node of the buffer's least-recently-active list.
 */
export class Ring {
  private items: Held[] = [];
  private head = 0;
  /** the highest sequenced position evicted from this session (AEP-0003 §5 `replay-exhausted`) */
  lost: { epoch: number; seq: number } | undefined;
  /** it holds an event of this daemon's own emitter */
  own = false;
  /** this daemon's own `session.ended` was seen */
  ended = false;
  prev: Ring | undefined;
  next: Ring | undefined;

  constructor(readonly session: string | undefined) {}

  get length(): number {
    return this.items.length - this.head;
  }

  push(h: Held): void {
    this.items.push(h);
  }

  peek(): Held | undefined {
    return this.items[this.head];
  }

  shift(): Held | undefined {
    if (this.head >= this.items.length) return undefined;
    const h = this.items[this.head]!;
    (this.items as (Held | undefined)[])[this.head] = undefined;
    this.head++;
    if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return h;
  }

  /** Take out every held event `drop` picks (order of the rest kept); returns them. */
  removeWhere(drop: (h: Held) => boolean): Held[] {
    const keep: Held[] = [];
    const out: Held[] = [];
    for (const h of this) (drop(h) ? out : keep).push(h);
    if (out.length > 0) {
      this.items = keep;
      this.head = 0;
    }
    return out;
  }

  /** Held events, oldest arrival first. */
  *[Symbol.iterator](): IterableIterator<Held> {
    for (let i = this.head; i < this.items.length; i++) yield this.items[i]!;
  }
}

/** A doubly linked recency list of rings: `touch` moves one to the newest end, `oldest` is the least recently active. */
export class RingList {
  private first: Ring | undefined;
  private last: Ring | undefined;

  get oldest(): Ring | undefined {
    return this.first;
  }

  touch(r: Ring): void {
    if (this.last === r) return;
    this.remove(r);
    r.prev = this.last;
    r.next = undefined;
    if (this.last) this.last.next = r;
    this.last = r;
    this.first ??= r;
  }

  remove(r: Ring): void {
    if (r.prev) r.prev.next = r.next;
    else if (this.first === r) this.first = r.next;
    if (r.next) r.next.prev = r.prev;
    else if (this.last === r) this.last = r.prev;
    r.prev = r.next = undefined;
  }
}
