import type { Logger } from '../core/logger.js';
import type { WriteOutcome } from '../bus/durable-log.js';
import type { Ingress, IngestOutcome, StreamHubApi } from './hub-types.js';
import { dedupeKey, type WireEvent } from '../aep/wire.js';

/** The durable store the ingress writes to (foreign-history.ts). */
export interface IngressLog {
  refusal(): string | undefined;
  write(events: readonly WireEvent[]): Promise<WriteOutcome>;
}

/** Where ingested events become spans (the OTel mirror); never throws into ingest. */
export interface IngressMirror {
  mirrorForeign(w: WireEvent): void;
}

export interface BridgeIngressOptions {
  readonly hub: Pick<StreamHubApi, 'knows' | 'publish'>;
  readonly history: IngressLog;
  readonly mirror?: IngressMirror;
  /**
   * Whether `session` is one of this daemon's own (Hermes) sessions: its
   * `(epoch, seq)` positions are assigned here alone, so another emitter's
   * sequenced event naming it is refused (absent: no own sessions).
   */
  readonly ownsSession?: (session: string) => boolean;
  readonly log?: Logger;
}

/** The reason given (and counted) when a batch names an own session's positions. */
export const OWN_SESSION_CONFLICT = "the session is one of this daemon's own: its positions are assigned here";

/**
 * Events from other emitters (POST /events, an emitter's WebSocket frames),
 * already envelope-checked. Each `(source, id)` not yet known (to the hub, or
 * to a batch still being written) is written to the foreign history with its
 * bytes as received, then mirrored into spans; then the batch, its
 * duplicates included, is published to the hub (AEP-0003 §5: admission
 * dedupes, live fan-out forwards as received). A copy of an event another
 * batch is still writing is left to that batch: nothing is published before
 * the history holds it. Nothing is re-sequenced or
 * stamped (AEP-0001 §7.1: the emitter owns its positions).
 */
export class BridgeIngress implements Ingress {
  /** keys of events being written now: a concurrent batch carrying them counts them as duplicates */
  private readonly inFlight = new Set<string>();
  private readonly counts = { batches: 0, accepted: 0, duplicates: 0, refused: 0, own_session_refused: 0, lost: 0, mirror_errors: 0 };

  constructor(private readonly o: BridgeIngressOptions) {}

  async ingest(events: readonly WireEvent[]): Promise<IngestOutcome> {
    this.counts.batches++;
    const taken = this.takesOwnPositions(events);
    if (taken >= 0) {
      this.counts.own_session_refused++;
      return { status: 'conflict', index: taken, reason: OWN_SESSION_CONFLICT };
    }
    const why = this.o.history.refusal();
    if (why) {
      this.counts.refused++;
      return { status: 'refused', reason: why };
    }
    const fresh: WireEvent[] = [];
    const keys = new Set<string>();
    /** what this batch publishes: all of it but copies another batch is still writing (that batch publishes them, once durable) */
    const out: WireEvent[] = [];
    for (const w of events) {
      const key = dedupeKey(w);
      if (this.inFlight.has(key) || this.o.hub.knows(w)) {
        if (keys.has(key) || !this.inFlight.has(key)) out.push(w);
        continue;
      }
      this.inFlight.add(key);
      keys.add(key);
      fresh.push(w);
      out.push(w);
    }
    const duplicates = events.length - fresh.length;
    let outcome: WriteOutcome;
    try {
      outcome = fresh.length > 0 ? await this.o.history.write(fresh) : { written: 0, retained: 0, lost: 0 };
    } catch {
      outcome = { written: 0, retained: 0, lost: fresh.length, reason: 'write failed' };
    }
    if (outcome.lost > 0 || outcome.retained > 0) return this.failed(fresh, keys, outcome);
    this.mirror(fresh);
    this.o.hub.publish(out);
    for (const k of keys) this.inFlight.delete(k);
    this.counts.accepted += fresh.length;
    this.counts.duplicates += duplicates;
    return { status: 'accepted', accepted: fresh.length, duplicates };
  }

  /**
   * Not all of the batch is in the history: refused (the client retries).
   * Lines held for a later write keep their keys in flight until they land
   * (then they are mirrored and published like any) or are given up.
   */
  private failed(fresh: readonly WireEvent[], keys: ReadonlySet<string>, outcome: WriteOutcome): IngestOutcome {
    this.counts.refused++;
    const release = () => {
      for (const k of keys) this.inFlight.delete(k);
    };
    if (outcome.final) {
      void outcome.final.then((f) => {
        if (f.lost === 0 && outcome.lost === 0) {
          this.mirror(fresh);
          this.o.hub.publish(fresh);
        } else this.counts.lost += f.lost;
        release();
      });
    } else {
      this.counts.lost += outcome.lost;
      release();
    }
    return { status: 'refused', reason: outcome.reason ?? 'the ingest log could not take the events' };
  }

  /**
   * The index of the first event that would take positions of an own
   * session (a sequenced event naming it; AEP-0001 §5.2: one owning emitter
   * per session, and resume tokens name the bare session), else -1. A
   * seq-less foreign-emitter event (a command, `attention.routed`) is part of
   * an own session's view and is taken.
   */
  private takesOwnPositions(events: readonly WireEvent[]): number {
    const owns = this.o.ownsSession;
    if (!owns) return -1;
    return events.findIndex((w) => w.session !== undefined && w.seq !== undefined && owns(w.session));
  }

  private mirror(events: readonly WireEvent[]): void {
    const m = this.o.mirror;
    if (!m) return;
    for (const w of events) {
      try {
        m.mirrorForeign(w);
      } catch {
        // spans mirror the history: a fault here never costs an event
        this.counts.mirror_errors++;
      }
    }
  }

  stats(): Record<string, number> {
    return { ...this.counts, in_flight: this.inFlight.size };
  }
}
