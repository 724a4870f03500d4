import type { AepEvent } from '../aep/event.js';
import { FAMILIES } from '../aep/lifecycle.js';
import type { WireEvent } from '../aep/wire.js';
import { RecencyMap } from '../util/recency-map.js';
import { SPAN_ATTR } from './attribute-catalogue.js';
import { traceIdFor } from './ids.js';
import { MAX_REMEMBERED } from './memory-bounds.js';
import { SpanBuilder, type BuilderOptions } from './span-builder.js';
import type { Attrs, SpanRecord } from './span-record.js';

const TRACEPARENT = /^[0-9a-f]{2}-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/;
/** the name the builder gives a run span (a Hermes turn); a foreign run is named by its own agent */
const HERMES_RUN = 'invoke_agent hermes';
const RUN_OPENING = FAMILIES.run.opening[0];

/** A foreign emitter's session inside the builder: `(source, session)`, never the bare name (AEP-0001 §5.2). */
const laneOf = (w: Pick<WireEvent, 'source'>, session: string): string => `${w.source}\u0000${session}`;

/** The parent span an incoming `traceparent` names. */
interface Parent {
  readonly traceId: string;
  readonly spanId: string;
}

/**
 * Spans for events other emitters sent in (AEP-0005 §3.1's synthesis, the
 * same span builder as Hermes's own, in a builder of their own): units are
 * keyed by `(source, session)` so two emitters' equal session names never
 * merge. The event is never changed: the builder reads a view with the
 * AEP-0001 §5.1 defaults applied and its lane as `session`; the spans get
 * the real session back. A run whose opening carries a `traceparent` hangs
 * its trace under that span (the emitter's own context); nothing is stamped.
 */
export class ForeignSpans {
  private readonly builder: SpanBuilder;
  /** builder trace id → the incoming context its root span is a child of */
  private readonly parents = new RecencyMap<string, Parent>(MAX_REMEMBERED);

  constructor(opts: BuilderOptions) {
    this.builder = new SpanBuilder(opts);
  }

  get openUnits(): number {
    return this.builder.openUnits;
  }

  /** One foreign event; the spans it finished. Agent-scoped events (no session) belong to no unit. */
  accept(w: WireEvent): SpanRecord[] {
    if (w.session === undefined) return [];
    const lane = laneOf(w, w.session);
    const run = typeof w.event['run'] === 'string' ? w.event['run'] : undefined;
    const tp = typeof w.event['traceparent'] === 'string' ? TRACEPARENT.exec(w.event['traceparent']) : null;
    // only a run's opening names its parent: a later event's context is the emitter's own span for THAT event's unit
    if (run && tp && w.type === RUN_OPENING) {
      const ours = traceIdFor(lane, run);
      if (!this.parents.get(ours)) this.parents.set(ours, { traceId: tp[1]!, spanId: tp[2]! });
    }
    const data = w.event['data'];
    const view = {
      ...w.event,
      session: lane,
      epoch: w.epoch,
      severity: w.severity,
      capture: w.capture,
      data: typeof data === 'object' && data !== null && !Array.isArray(data) ? data : {},
    } as unknown as AepEvent;
    return this.builder.accept(view).finished.map((s) => this.fix(s));
  }

  sweep(nowMs: number, idleMs: number): SpanRecord[] {
    return this.builder.sweep(nowMs, idleMs).map((s) => this.fix(s));
  }

  /** The span as the foreign emitter's: its real session, its agent's name, under its incoming parent. */
  private fix(s: SpanRecord): SpanRecord {
    const attributes = realSession({ ...s.attributes });
    const agent = attributes[SPAN_ATTR.agentName];
    const name = s.name === HERMES_RUN && typeof agent === 'string' ? `invoke_agent ${agent}` : s.name;
    const parent = this.parents.get(s.traceId);
    const trace = (t: string) => this.parents.get(t)?.traceId ?? t;
    return {
      ...s,
      name,
      attributes,
      traceId: trace(s.traceId),
      ...(s.parentSpanId ? {} : parent ? { parentSpanId: parent.spanId } : {}),
      events: s.events.map((e) => ({ ...e, attributes: defined(e.attributes) })),
      links: s.links.map((l) => ({ ...l, traceId: trace(l.traceId) })),
    };
  }
}

/** The lane back to the session it names, in the identity attributes. */
function realSession(a: Attrs): Attrs {
  const source = a[SPAN_ATTR.source];
  if (typeof source !== 'string') return a;
  for (const k of [SPAN_ATTR.sessionId, SPAN_ATTR.session, SPAN_ATTR.conversationId]) {
    const v = a[k];
    if (typeof v === 'string' && v.startsWith(`${source}\u0000`)) a[k] = v.slice(source.length + 1);
  }
  return a;
}

/** A foreign event without `seq` (AEP-0001 §5.2's exception) leaves that span event attribute unset. */
function defined(a: Attrs): Attrs {
  const out: Attrs = {};
  for (const [k, v] of Object.entries(a)) if (v !== undefined) out[k] = v;
  return out;
}
