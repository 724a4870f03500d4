import type { AepEvent } from '../aep/event.js';
import type { Degradation } from '../core/health-latch.js';
import type { EventSink, WriteOptions, WriteOutcome } from './sink.js';

/** What became of one hook's events on the durable sinks, when it is answered. */
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
 * Fans each batch out to every sink, in the order they were added. The
 * events are frozen (the pipeline's stages ran before): no sink sees another
 * sink's doing, so the order carries no meaning. A sink that throws is counted and skipped; the others are unaffected. The
 * returned promise settles when the DURABLE sinks settled (never on export)
 * and never rejects.
 */
export class EventBus {
  private readonly sinks: EventSink[] = [];
  private sinkErrors = 0;

  add(sink: EventSink): void {
    this.sinks.push(sink);
  }

  /** Why a new hook (of `session`, when known) must be refused before it is processed (a durable sink cannot take it), or undefined. */
  refusal(session?: string): string | undefined {
    for (const s of this.sinks) {
      if (!s.durable) continue;
      const why = s.refusal?.(session);
      if (why) return `${s.name}: ${why}`;
    }
    return undefined;
  }

  /** Whether a durable sink refuses this one session alone now (never counted: a check, not a refusal). */
  refusesSession(session: string): boolean {
    return this.sinks.some((s) => s.durable && s.refusesSession?.(session) === true);
  }

  publish(events: readonly AepEvent[], opts?: WriteOptions): Promise<PublishOutcome> {
    if (events.length === 0) return Promise.resolve({ retained: 0, lost: 0 });
    const failed = (): WriteOutcome => ({ written: 0, retained: 0, lost: events.length, reason: 'sink failed' });
    const waits: Promise<WriteOutcome>[] = [];
    for (const sink of this.sinks) {
      try {
        const r = opts ? sink.write(events, opts) : sink.write(events);
        if (sink.durable && r) waits.push(r.catch(failed));
      } catch {
        this.sinkErrors++;
        if (sink.durable) waits.push(Promise.resolve(failed()));
      }
    }
    if (waits.length === 0) return Promise.resolve({ retained: 0, lost: 0 });
    return Promise.all(waits).then((rs) => {
      const sum = (k: 'retained' | 'lost') => rs.reduce((n, r) => n + r[k], 0);
      const reason = rs.find((r) => r.reason)?.reason;
      const finals = rs.map((r) => r.final).filter((p): p is NonNullable<WriteOutcome['final']> => p !== undefined);
      const finalLost = finals.length > 0 ? Promise.all(finals).then((fs) => fs.reduce((n, f) => n + f.lost, 0)) : undefined;
      return { retained: sum('retained'), lost: sum('lost'), ...(reason ? { reason } : {}), ...(finalLost ? { finalLost } : {}) };
    });
  }

  /** The sinks that cannot do their job right now (empty when all is well). */
  degraded(): Degradation[] {
    const out: Degradation[] = [];
    for (const s of this.sinks) {
      const d = s.health?.();
      if (d) out.push(d);
    }
    return out;
  }

  async shutdown(): Promise<void> {
    await Promise.allSettled(this.sinks.map((s) => s.shutdown()));
  }

  stats(): Record<string, unknown> {
    const out: Record<string, unknown> = { errors: this.sinkErrors };
    for (const s of this.sinks) out[s.name] = s.stats();
    return out;
  }
}
