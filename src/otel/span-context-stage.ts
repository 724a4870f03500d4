import type { AepEvent } from '../aep/event.js';
import type { EventStage } from '../bus/event-stage.js';
import { traceparent } from './ids.js';
import type { SpanCtx } from './span-builder.js';

/** What gives an event its span context: the OTel mirror (its span builder), or a bare builder in tests. */
export interface SpanContextSource {
  /** Take the event into the span state; the context of the span it belongs to, if any. */
  assign(ev: AepEvent): SpanCtx | undefined;
  /**
   * The event `assign` just took, as stamped (frozen, the object every consumer will get):
   * what that event finished waits on it until the history holds it (the mirror's `consume`).
   */
  stamped?(ev: AepEvent): void;
}

/**
 * The pipeline stage between identity and the bus that gives every event
 * belonging to a lifecycle unit the W3C `traceparent` of that unit's span
 * (AEP-0001 §5.1 #14). It only assigns span context: no span leaves from
 * here (the mirror exports them from the bus, once the history holds their
 * event). It returns NEW frozen events: consumers never see an event change,
 * so their order on the bus does not matter. Wired only when the mirror is on
 * (off: no `traceparent`, as documented).
 */
export class SpanContextStage implements EventStage {
  /** events whose span context could not be assigned (passed on without `traceparent`) */
  errors = 0;

  constructor(private readonly source: SpanContextSource) {}

  process(events: readonly AepEvent[]): readonly AepEvent[] {
    return events.map((ev) => this.stamp(ev));
  }

  private stamp(ev: AepEvent): AepEvent {
    let ctx: SpanCtx | undefined;
    try {
      ctx = this.source.assign(ev);
    } catch {
      // spans are a mirror of the history: a fault here must not cost the hook its events
      this.errors++;
    }
    const out = Object.freeze(ctx ? { ...ev, traceparent: traceparent(ctx.traceId, ctx.spanId, ctx.sampled) } : { ...ev });
    try {
      this.source.stamped?.(out);
    } catch {
      this.errors++;
    }
    return out;
  }
}
