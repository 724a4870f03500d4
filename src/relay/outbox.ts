import { severityRank, type WireEvent } from '../aep/wire.js';

const NOTICE = severityRank('notice');
const isLow = (w: WireEvent) => severityRank(w.severity) < NOTICE;

/**
 * The relay link's bounded queue of events not yet sent (AEP-0003 §8.4,
 * emitter side): when full, a `debug`/`info` event goes first (the oldest
 * queued one, or the newcomer when none is queued); only when every queued
 * event is `notice`+ and the newcomer is too does the oldest of them go.
 * Every drop is counted, by class.
 */
export class Outbox {
  private items: WireEvent[] = [];
  droppedLow = 0;
  droppedNotice = 0;

  constructor(readonly capacity: number) {}

  get size(): number {
    return this.items.length;
  }

  /** queue `w`; returns 'notice' when a notice+ event had to be dropped for it */
  push(w: WireEvent): 'ok' | 'low' | 'notice' {
    if (this.items.length < this.capacity) {
      this.items.push(w);
      return 'ok';
    }
    const low = this.items.findIndex(isLow);
    if (low >= 0) {
      this.items.splice(low, 1);
      this.items.push(w);
      this.droppedLow++;
      return 'low';
    }
    if (isLow(w)) {
      this.droppedLow++;
      return 'low';
    }
    this.items.shift();
    this.items.push(w);
    this.droppedNotice++;
    return 'notice';
  }

  /** the oldest queued event, removed */
  shift(): WireEvent | undefined {
    return this.items.shift();
  }

  /** everything queued, in order, emptying the queue */
  take(): WireEvent[] {
    const out = this.items;
    this.items = [];
    return out;
  }
}

/**
 * The last `capacity` events sent, with when: after a reconnect those sent
 * within `windowMs` before the link was found cut are sent again (the relay
 * may not have received them; consumers dedupe on `(source, id)`).
 */
export class SentRing {
  private readonly ring: { w: WireEvent; at: number }[] = [];

  constructor(
    readonly capacity: number,
    readonly windowMs: number,
  ) {}

  add(w: WireEvent, at: number): void {
    this.ring.push({ w, at });
    if (this.ring.length > this.capacity) this.ring.shift();
  }

  /** the events sent at or after `cutAt - windowMs`, in order; the ring is emptied (they are re-added as they are resent) */
  since(cutAt: number): WireEvent[] {
    const from = cutAt - this.windowMs;
    const out = this.ring.filter((e) => e.at >= from).map((e) => e.w);
    this.ring.length = 0;
    return out;
  }
}
