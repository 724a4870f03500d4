import type { UnitKind } from '../aep/lifecycle.js';
import { RecencyMap } from '../util/recency-map.js';
import { MAX_REMEMBERED } from './memory-bounds.js';
import { SPAN_ATTR } from './attribute-catalogue.js';
import type { UnitCapture, UnitState } from './builder-state.js';
import type { SpanCtx } from './span-contexts.js';
import type { Attrs, SpanRecord } from './span-record.js';
import { sessionOfKey, unitKey } from './unit-keys.js';

/** A lifecycle unit whose span is still open: what its span will be, gathered so far. */
export interface Unit {
  readonly key: string;
  readonly kind: UnitKind;
  readonly session: string;
  readonly ctx: SpanCtx;
  readonly parentSpanId?: string;
  readonly name: string;
  readonly startMs: number;
  readonly startKnown: boolean;
  lastMs: number;
  readonly attributes: Attrs;
  readonly events: { name: string; timeMs: number; attributes: Attrs }[];
  droppedEvents: number;
  readonly links: { traceId: string; spanId: string; sampled: boolean; attributes: Attrs }[];
  status: SpanRecord['status'];
}

export type NewUnit = Omit<Unit, 'lastMs' | 'events' | 'droppedEvents' | 'links' | 'status'>;

export interface BuilderCounters {
  /** events for a unit that was already closed (idle, evicted, session end): counted, not re-spanned */
  late: number;
  finished: number;
  incomplete: number;
  evicted: number;
  /** events that belonged to no open unit (e.g. session.started before any run) */
  unattached: number;
}

/** how a unit ended: its terminal, or one of the ways a unit is closed without one */
type Ending = 'complete' | 'session_ended' | 'idle' | 'evicted' | 'superseded';
/** children close before their parents */
const ORDER: readonly UnitKind[] = ['card', 'tool', 'delegation', 'run'];
const byOrder = (a: Unit, b: Unit) => ORDER.indexOf(a.kind) - ORDER.indexOf(b.kind);

/**
 * The span builder's open units, oldest first and by session, and the keys
 * of the units already closed: opening, closing (by terminal, supersession,
 * session end, idleness, overflow) and turning a closed unit into its span.
 */
export class OpenUnits {
  readonly counters: BuilderCounters = { late: 0, finished: 0, incomplete: 0, evicted: 0, unattached: 0 };
  /** open units, oldest first (bounded by `evictOverflow`) */
  private readonly open = new RecencyMap<string, Unit>(Infinity);
  /** the same open units by session, each set in opening order: a session's end or new turn finds its own */
  private readonly bySession = new Map<string, Set<Unit>>();
  /** units already closed (and exported): a late event must not mint a second span with the same id */
  private readonly closed = new RecencyMap<string, true>(MAX_REMEMBERED);

  constructor(private readonly maxOpen: number) {}

  get size(): number {
    return this.open.size;
  }

  /** Whether nothing was opened or closed yet (a saved state loads only into such a table). */
  get fresh(): boolean {
    return this.open.size === 0 && this.closed.size === 0;
  }

  get(key: string): Unit | undefined {
    return this.open.get(key);
  }

  /** A unit may open unless it was already closed (then its late events are counted, not re-spanned). */
  mayOpen(key: string): boolean {
    if (!this.closed.has(key)) return true;
    this.counters.late++;
    return false;
  }

  /** Forget that `key` was closed: its id is reused for a new unit (a tool call id Hermes derived again). */
  reuse(key: string): void {
    this.closed.delete(key);
  }

  create(u: NewUnit): Unit {
    const unit: Unit = { ...u, lastMs: u.startMs, events: [], droppedEvents: 0, links: [], status: { code: 'unset' } };
    if (!u.startKnown) unit.attributes[SPAN_ATTR.startUnknown] = true;
    this.open.set(u.key, unit);
    let same = this.bySession.get(u.session);
    if (!same) this.bySession.set(u.session, (same = new Set()));
    same.add(unit);
    return unit;
  }

  /** Close a unit: its span, ended at `endMs`. */
  finish(unit: Unit, endMs: number, ending: Ending): SpanRecord {
    this.open.delete(unit.key);
    const same = this.bySession.get(unit.session);
    same?.delete(unit);
    if (same?.size === 0) this.bySession.delete(unit.session);
    this.closed.set(unit.key, true);
    this.counters.finished++;
    const attributes = { ...unit.attributes };
    if (ending !== 'complete') {
      this.counters.incomplete++;
      attributes[SPAN_ATTR.incomplete] = true;
      attributes[SPAN_ATTR.incompleteReason] = ending;
    }
    return {
      name: unit.name,
      traceId: unit.ctx.traceId,
      spanId: unit.ctx.spanId,
      ...(unit.parentSpanId ? { parentSpanId: unit.parentSpanId } : {}),
      sampled: unit.ctx.sampled,
      startMs: unit.startMs,
      endMs: Math.max(unit.startMs, endMs),
      attributes,
      events: unit.events,
      droppedEvents: unit.droppedEvents,
      links: unit.links,
      status: unit.status,
    };
  }

  /** Close the session's runs other than `run`, and every unit of their traces, as incomplete (`superseded`). */
  supersede(session: string, run: string): SpanRecord[] {
    const own = [...(this.bySession.get(session) ?? [])];
    const keep = unitKey('run', session, run);
    const stale = own.filter((u) => u.kind === 'run' && u.key !== keep);
    if (stale.length === 0) return [];
    const traces = new Set(stale.map((u) => u.ctx.traceId));
    return own
      .filter((u) => traces.has(u.ctx.traceId))
      .sort(byOrder)
      .map((u) => this.finish(u, u.lastMs, 'superseded'));
  }

  /** The session's end closes every unit it left open, children before their parents. */
  closeSession(session: string, t: number): SpanRecord[] {
    return [...(this.bySession.get(session) ?? [])].sort(byOrder).map((u) => this.finish(u, t, 'session_ended'));
  }

  /** Close the oldest units past the bound, as incomplete (`evicted`). */
  evictOverflow(): SpanRecord[] {
    const out: SpanRecord[] = [];
    while (this.open.size > this.maxOpen) {
      const oldest = this.open.shift()![1];
      this.counters.evicted++;
      out.push(this.finish(oldest, oldest.lastMs, 'evicted'));
    }
    return out;
  }

  /** Close every unit whose session (its last event: `lastOf`) has been silent longer than `idleMs`; each ends at its own last event. */
  sweep(nowMs: number, idleMs: number, lastOf: (session: string) => number | undefined): SpanRecord[] {
    const out: SpanRecord[] = [];
    for (const unit of [...this.open.values()]) {
      const last = lastOf(unit.session) ?? unit.lastMs;
      if (nowMs - last > idleMs) out.push(this.finish(unit, unit.lastMs, 'idle'));
    }
    return out;
  }

  /** The open units copied (events, links and contexts never change once added; attributes change at a terminal). */
  capture(): { units: UnitCapture[]; closed: string[] } {
    const units: UnitCapture[] = [];
    for (const u of this.open.values()) {
      units.push({
        key: u.key,
        kind: u.kind,
        session: u.session,
        ctx: u.ctx,
        ...(u.parentSpanId !== undefined ? { parent: u.parentSpanId } : {}),
        name: u.name,
        start: u.startMs,
        startKnown: u.startKnown,
        last: u.lastMs,
        attributes: { ...u.attributes },
        events: u.events.slice(),
        dropped: u.droppedEvents,
        links: u.links.slice(),
        status: u.status,
      });
    }
    return { units, closed: [...this.closed.keys()] };
  }

  /**
   * Take back saved units and closed keys, of the sessions `keep` accepts:
   * `ctx` resolves a unit's context index, `sampled` a link's trace.
   */
  load(
    units: readonly UnitState[],
    closed: readonly string[],
    ctx: readonly SpanCtx[],
    sampled: (traceId: string) => boolean,
    keep: (s: string) => boolean,
  ): void {
    for (const u of units) {
      if (!keep(u.session)) continue;
      const unit = this.create({
        key: u.key,
        kind: u.kind,
        session: u.session,
        ctx: ctx[u.ctx]!,
        ...(u.parent !== undefined ? { parentSpanId: u.parent } : {}),
        name: u.name,
        startMs: u.start,
        startKnown: u.startKnown,
        attributes: u.attributes,
      });
      unit.lastMs = u.last;
      unit.events.push(...u.events);
      unit.droppedEvents = u.dropped;
      for (const [traceId, spanId, attributes] of u.links) unit.links.push({ traceId, spanId, sampled: sampled(traceId), attributes });
      unit.status = u.status;
    }
    // a closed run, tool or delegation of a session left out is forgotten too (its log is not replayed either)
    this.closed.load(closed, new Array<true>(closed.length).fill(true), (k) => {
      const s = sessionOfKey(k);
      return s === undefined || keep(s);
    });
  }
}
