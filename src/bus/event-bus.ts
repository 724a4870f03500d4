import type { AepEvent } from '../aep/event.js';
import type { Degradation } from '../core/health-latch.js';
import type { Consumer, Reporting } from './consumer.js';
import type { DurableLog, WriteOptions, WriteOutcome } from './durable-log.js';

/** What became of one hook's events on the durable logs, when it is answered. */
export interface PublishOutcome {
  /** events held in memory after a failed write, to be written when the log recovers */
  readonly retained: number;
  /** events given up */
  readonly lost: number;
  readonly reason?: string;
  /** when `retained` > 0: the number of events finally given up, once all are settled */
  readonly finalLost?: Promise<number>;
}

/**
 * Two ordered lists. Each batch goes first to the DURABLE logs (the history),
 * whose writes the returned promise waits for; then, once those settled, to
 * the AFTER-DURABLE consumers, in the order they were added: once written
 * when every event was written, once finally written when some were retained,
 * never when some were given up. So a consumer only ever sees what the
 * history holds. Batches written at once reach the consumers in the order
 * they were published (a batch whose write settled waits for the earlier ones
 * still being written: writes to different files settle in any order, the
 * consumers see the stamp order); a retained batch does not hold the later
 * ones up, it follows them once written. The events are frozen (the
 * pipeline's stages ran before): no consumer sees another's doing. One that
 * throws is counted and skipped; the others are unaffected. The promise never
 * rejects.
 */
export class EventBus {
  private readonly durable: DurableLog[] = [];
  private readonly after: (Consumer & Reporting)[] = [];
  /** batches published, neither delivered nor given up yet (the snapshot's capture asks) */
  private readonly pending = new Set<readonly AepEvent[]>();
  /** the batches in publication order whose turn to be delivered has not come (bounded by the writes in flight) */
  private readonly queue: { readonly events: readonly AepEvent[]; state: 'writing' | 'written' | 'given-up' | 'retained' }[] = [];
  private errors = 0;

  /** A durable log: its write holds the hook reply. */
  addDurable(log: DurableLog): void {
    this.durable.push(log);
  }

  /** A consumer that gets each batch once the durable logs hold it, after those added before it. */
  addAfterDurable(consumer: Consumer & Reporting): void {
    this.after.push(consumer);
  }

  /** Why a new hook (of `session`, when known) must be refused before it is processed (a durable log cannot take it), or undefined. */
  refusal(session?: string): string | undefined {
    for (const s of this.durable) {
      const why = s.refusal?.(session);
      if (why) return `${s.name}: ${why}`;
    }
    return undefined;
  }

  /** Whether a durable log refuses this one session alone now (never counted: a check, not a refusal). */
  refusesSession(session: string): boolean {
    return this.durable.some((s) => s.refusesSession?.(session) === true);
  }

  publish(events: readonly AepEvent[], opts?: WriteOptions): Promise<PublishOutcome> {
    if (events.length === 0) return Promise.resolve({ retained: 0, lost: 0 });
    const failed = (): WriteOutcome => ({ written: 0, retained: 0, lost: events.length, reason: 'sink failed' });
    const waits: Promise<WriteOutcome>[] = [];
    for (const log of this.durable) {
      try {
        waits.push((opts ? log.write(events, opts) : log.write(events)).catch(failed));
      } catch {
        this.errors++;
        waits.push(Promise.resolve(failed()));
      }
    }
    this.pending.add(events);
    const turn = { events, state: 'writing' as 'writing' | 'written' | 'given-up' | 'retained' };
    this.queue.push(turn);
    return Promise.all(waits).then((rs) => {
      const sum = (k: 'retained' | 'lost') => rs.reduce((n, r) => n + r[k], 0);
      const reason = rs.find((r) => r.reason)?.reason;
      const finals = rs.map((r) => r.final).filter((p): p is NonNullable<WriteOutcome['final']> => p !== undefined);
      const finalLost = finals.length > 0 ? Promise.all(finals).then((fs) => fs.reduce((n, f) => n + f.lost, 0)) : undefined;
      const out = { retained: sum('retained'), lost: sum('lost'), ...(reason ? { reason } : {}), ...(finalLost ? { finalLost } : {}) };
      if (out.lost > 0) turn.state = 'given-up';
      else if (out.retained === 0) turn.state = 'written';
      else {
        turn.state = 'retained';
        void (finalLost ?? Promise.resolve(0)).then((lost) => (lost > 0 ? this.giveUp(events) : this.deliver(events)));
      }
      this.drain();
      return out;
    });
  }

  /** the batches published but not yet delivered nor given up, in publication order */
  inFlight(): Iterable<readonly AepEvent[]> {
    return this.pending;
  }

  /** Deliver (or give up) the batches at the head whose write settled, in publication order. */
  private drain(): void {
    while (this.queue.length > 0 && this.queue[0]!.state !== 'writing') {
      const t = this.queue.shift()!;
      if (t.state === 'written') this.deliver(t.events);
      else if (t.state === 'given-up') this.giveUp(t.events);
      // retained: delivered on its own once finally written
    }
  }

  private deliver(events: readonly AepEvent[]): void {
    this.pending.delete(events);
    for (const c of this.after) {
      try {
        c.consume(events);
      } catch {
        this.errors++;
      }
    }
  }

  /** Some of the batch was given up: none of it is consumed (the history may hold part of it; no consumer tells which). */
  private giveUp(events: readonly AepEvent[]): void {
    this.pending.delete(events);
    for (const c of this.after) {
      try {
        c.unwritten?.(events);
      } catch {
        this.errors++;
      }
    }
  }

  /** The logs and consumers that cannot do their job right now (empty when all is well), durable ones first. */
  degraded(): Degradation[] {
    const out: Degradation[] = [];
    for (const s of [...this.durable, ...this.after]) {
      const d = s.health?.();
      if (d) out.push(d);
    }
    return out;
  }

  /** Shut every log and consumer down (those another owner closes at its own time have a no-op `shutdown`). */
  async shutdown(): Promise<void> {
    await Promise.allSettled([...this.durable, ...this.after].map((s) => s.shutdown()));
  }

  /** `errors`: throws counted and skipped; then each reporting log's and consumer's counters by name. */
  stats(): Record<string, unknown> {
    const out: Record<string, unknown> = { errors: this.errors };
    for (const s of [...this.durable, ...this.after]) if (s.stats) out[s.name] = s.stats();
    return out;
  }
}
