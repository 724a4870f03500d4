import { UNKNOWN_SESSION, type AepEvent } from '../../src/aep/event.js';
import { captureRank, minCapture, type CaptureLevel } from '../../src/capture/levels.js';
import { downlevel } from '../../src/capture/downlevel.js';
import type { CaptureEvent } from '../../src/capture/types.js';
import { cardSpanId, delegationSpanId, orphanTraceId, runSpanId, toolSpanId, traceIdFor } from './ids.js';
import type { TraceSampler } from './sampler.js';
import { cardStartAttrs, delegationStartAttrs, runStartAttrs, terminalAttrs, toolStartAttrs } from './span-attributes.js';
import type { Attrs, SpanRecord } from './span-record.js';
import { RecencyMap } from '../../src/util/recency-map.js';

/** A span's identity, as other spans link to it and AEP events point at it. */
export interface SpanCtx {
  readonly traceId: string;
  readonly spanId: string;
  readonly sampled: boolean;
  readonly kind: UnitKind;
}

import { builderStateJson, LETTER_KIND, type BuilderCapture, type BuilderState, type Columns, type UnitCapture, type UnitKind } from './builder-state.js';
type Outcome = 'complete' | 'session_ended' | 'idle' | 'evicted' | 'superseded';
/** children close before their parents */
const ORDER: readonly UnitKind[] = ['card', 'tool', 'delegation', 'run'];

interface Unit {
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

export interface BuilderOptions {
  readonly sampler: TraceSampler;
  /** the exporter's own ceiling (AEP_OTEL_CAPTURE): span events carry event data only at redacted+ */
  readonly ceiling: CaptureLevel;
  readonly maxOpenUnits?: number;
  readonly maxEventsPerSpan?: number;
}

export interface BuilderCounters {
  /** events for a unit that was already closed (idle, evicted, session end): counted, not re-spanned */
  late: number;
  finished: number;
  incomplete: number;
  evicted: number;
  /** events that belonged to no open unit (e.g. session.started before any run) */
  unattached: number;
}

const MAX_REMEMBERED = 50_000;
const MAX_DATA_CHARS = 16_384;

/**
 * Derives spans from the AEP stream (AEP-0005 §3.1's start/finish synthesis
 * via `cause`): one span per lifecycle unit (run, tool call, attention card,
 * delegation), each AEP event a span event on its unit's span, cause links
 * across units. Pure state machine: no I/O, no clock (callers pass `now` to
 * `sweep`); it returns finished spans, it does not export them.
 */
export class SpanBuilder {
  readonly counters: BuilderCounters = { late: 0, finished: 0, incomplete: 0, evicted: 0, unattached: 0 };
  /** open units, oldest first (bounded by `evictOverflow`) */
  private readonly open = new RecencyMap<string, Unit>(Infinity);
  /** the same open units by session, each set in opening order: a session's end or new turn finds its own */
  private readonly bySession = new Map<string, Set<Unit>>();
  private readonly eventCtx = new RecencyMap<string, SpanCtx>(MAX_REMEMBERED);
  private readonly lastRun = new RecencyMap<string, SpanCtx>(MAX_REMEMBERED);
  private readonly delegatedBy = new RecencyMap<string, SpanCtx>(MAX_REMEMBERED);
  private readonly sampledByTrace = new RecencyMap<string, boolean>(MAX_REMEMBERED);
  /** last event time per session: a unit is idle when its whole session is */
  private readonly sessionLast = new RecencyMap<string, number>(MAX_REMEMBERED);
  /** units already closed (and exported): a late event must not mint a second span with the same id */
  private readonly closedMap = new RecencyMap<string, true>(MAX_REMEMBERED);
  private readonly maxOpen: number;
  private readonly maxEvents: number;

  constructor(private readonly opts: BuilderOptions) {
    this.maxOpen = opts.maxOpenUnits ?? 10_000;
    this.maxEvents = opts.maxEventsPerSpan ?? 512;
  }

  get openUnits(): number {
    return this.open.size;
  }

  /**
   * Take one event: returns the span context it belongs to (for its
   * `traceparent`), and the spans this event finished.
   */
  accept(ev: AepEvent): { ctx?: SpanCtx; finished: SpanRecord[] } {
    const t = Date.parse(ev.time);
    this.sessionLast.set(ev.session, Math.max(t, this.sessionLast.get(ev.session) ?? t));
    const finished: SpanRecord[] = [];
    let unit: Unit | undefined;
    switch (ev.type) {
      case 'run.started':
        // a session runs one turn at a time: an older run still open never got its terminal
        // (a failed model call ends a Hermes turn without on_session_end), so it closes here
        if (ev.run) finished.push(...this.supersede(ev.session, ev.run, t));
        unit = ev.run ? this.openRun(ev, t) : undefined;
        break;
      case 'run.finished':
      case 'run.cancelled':
      case 'run.failed':
        unit = ev.run ? (this.open.get(runKey(ev.session, ev.run)) ?? this.openRun(ev, t, false)) : undefined;
        break;
      case 'tool.requested': {
        // a reused call id (Hermes derives ids when a provider omits them) is a new call
        const id = callId(ev);
        if (id) this.closedMap.delete(toolKey(ev.session, id));
        unit = this.openTool(ev, t, true);
        break;
      }
      case 'tool.completed':
      case 'tool.failed':
      case 'tool.denied': {
        const id = callId(ev);
        unit = id ? (this.open.get(toolKey(ev.session, id)) ?? this.openTool(ev, t, false)) : undefined;
        break;
      }
      case 'attention.requested':
        unit = this.openCard(ev, t);
        break;
      case 'attention.answered':
      case 'attention.resolved':
      case 'attention.timeout':
        unit = ev.subject ? this.open.get(cardKey(ev.session, ev.subject)) : undefined;
        break;
      case 'delegation.subagent.started':
        unit = this.openDelegation(ev, t, true);
        break;
      case 'delegation.subagent.stopped':
        unit = ev.subject ? (this.open.get(delegationKey(ev.session, ev.subject)) ?? this.openDelegation(ev, t, false)) : undefined;
        break;
      case 'session.ended':
        finished.push(...this.closeSession(ev.session, t));
        break;
      default:
        break;
    }
    // events of no unit of their own ride on their run's span
    unit ??= ev.run ? this.open.get(runKey(ev.session, ev.run)) : undefined;
    if (!unit) {
      this.counters.unattached++;
      return { finished };
    }
    this.addEvent(unit, ev, t);
    // outcome attributes only from the unit's OWN events (a tool failure riding
    // on its run for want of a call id must not mark the run failed)
    if (ownKind(ev.type) === unit.kind || (unit.kind === 'run' && ev.type === 'x.hermes.api.error')) {
      const { attrs, status } = terminalAttrs(ev);
      Object.assign(unit.attributes, attrs);
      if (status) unit.status = status;
    }
    if (isTerminal(ev.type, unit.kind)) finished.push(this.finish(unit, t, 'complete'));
    finished.push(...this.evictOverflow());
    return { ctx: unit.ctx, finished };
  }

  /**
   * The builder's memory for the start-up snapshot, captured at once: open
   * units copied, the lookups as key and value columns, each in its own
   * order. Cheap (the span contexts are shared, they never change); turning
   * it into JSON (`builderStateJson`) can then happen in slices.
   */
  captureState(): BuilderCapture {
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
        // attributes change at a terminal; events, links and contexts never change once added
        attributes: { ...u.attributes },
        events: u.events.slice(),
        dropped: u.droppedEvents,
        links: u.links.slice(),
        status: u.status,
      });
    }
    const cols = <V>(m: RecencyMap<string, V>): [string[], V[]] => [[...m.keys()], [...m.values()]];
    return {
      units,
      eventCtx: cols(this.eventCtx),
      lastRun: cols(this.lastRun),
      delegatedBy: cols(this.delegatedBy),
      sessionLast: cols(this.sessionLast),
      closed: [...this.closedMap.keys()],
    };
  }

  /** The same memory as parsed JSON (what a snapshot holds). */
  saveState(): BuilderState {
    return JSON.parse([...builderStateJson(this.captureState())].join('')) as BuilderState;
  }

  /**
   * Take back a saved memory, into a builder that has seen nothing yet.
   * Units and per-session entries of sessions `keep` refuses are left out (a
   * log that fell out of the replay window is not rebuilt either).
   */
  loadState(state: BuilderState, keep: (session: string) => boolean = () => true): void {
    if (this.open.size > 0 || this.eventCtx.size > 0 || this.closedMap.size > 0) throw new Error('loadState needs a fresh builder');
    const [traces, spans, kinds] = state.ctx;
    const ctx = traces.map((traceId, i) => this.ctxOf(traceId, spans[i]!, LETTER_KIND[kinds[i]!]!));
    for (const u of state.units) {
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
      for (const [traceId, spanId, attributes] of u.links) unit.links.push({ traceId, spanId, sampled: this.sampled(traceId), attributes });
      unit.status = u.status;
    }
    const deref = ([keys, values]: Columns<number>): [string[], SpanCtx[]] => [keys, values.map((i) => ctx[i]!)];
    this.eventCtx.load(...deref(state.eventCtx));
    this.lastRun.load(...deref(state.lastRun), keep);
    this.delegatedBy.load(...deref(state.delegatedBy));
    this.sessionLast.load(...state.sessionLast, keep);
    // a closed run, tool or delegation of a session left out is forgotten too (its log is not replayed either)
    this.closedMap.load(state.closed, new Array<true>(state.closed.length).fill(true), (k) => {
      const s = sessionOfKey(k);
      return s === undefined || keep(s);
    });
  }

  /**
   * Close every unit whose session has been silent for longer than `idleMs`
   * (Hermes killed, a hook timed out: a terminal that will never come). Each
   * ends at its own last event.
   */
  sweep(nowMs: number, idleMs: number): SpanRecord[] {
    const out: SpanRecord[] = [];
    for (const unit of [...this.open.values()]) {
      const last = this.sessionLast.get(unit.session) ?? unit.lastMs;
      if (nowMs - last > idleMs) out.push(this.finish(unit, unit.lastMs, 'idle'));
    }
    return out;
  }

  private sampled(traceId: string): boolean {
    let s = this.sampledByTrace.get(traceId);
    if (s === undefined) {
      s = this.opts.sampler(traceId);
      this.sampledByTrace.set(traceId, s);
    }
    return s;
  }

  private ctxOf(traceId: string, spanId: string, kind: UnitKind): SpanCtx {
    return { traceId, spanId, sampled: this.sampled(traceId), kind };
  }

  private runCtx(session: string, run: string): SpanCtx {
    return this.ctxOf(traceIdFor(session, run), runSpanId(session, run), 'run');
  }

  private openRun(ev: AepEvent, t: number, startKnown = true): Unit | undefined {
    const key = runKey(ev.session, ev.run!);
    const existing = this.open.get(key);
    if (existing) return existing;
    if (!this.mayOpen(key)) return undefined;
    const ctx = this.runCtx(ev.session, ev.run!);
    const unit = this.create({
      key,
      kind: 'run',
      session: ev.session,
      ctx,
      name: 'invoke_agent hermes',
      startMs: t,
      startKnown,
      attributes: runStartAttrs(ev),
    });
    // a session is walkable turn by turn; a delegated session points at its delegation
    const prev = this.lastRun.get(ev.session);
    if (prev && prev.spanId !== ctx.spanId) unit.links.push({ ...prev, attributes: { 'aep.link.type': 'previous_run' } });
    const parent = this.delegatedBy.get(ev.session);
    if (parent) unit.links.push({ ...parent, attributes: { 'aep.link.type': 'delegated_by' } });
    this.lastRun.set(ev.session, ctx);
    return unit;
  }

  private openTool(ev: AepEvent, t: number, startKnown: boolean): Unit | undefined {
    const id = callId(ev);
    if (!id) return undefined;
    return this.openChild(ev, t, {
      key: toolKey(ev.session, id),
      kind: 'tool',
      parent: this.runParent(ev),
      orphan: `tool:${id}`,
      // from the opening event's id: unique even when a call id is reused, stable across replay
      spanId: toolSpanId(ev.session, ev.id),
      name: `execute_tool ${toolName(ev) ?? 'unknown'}`,
      startKnown,
      attributes: toolStartAttrs(ev),
    });
  }

  private openCard(ev: AepEvent, t: number): Unit | undefined {
    // child of the tool span it belongs to (its cause), else of its run
    const cause = ev.cause ? this.eventCtx.get(ev.cause) : undefined;
    // the unknown lane (approvals no session claimed) has no run spans to hang a card under
    const parent = cause?.kind === 'tool' ? cause : ev.session !== UNKNOWN_SESSION ? this.runParent(ev) : undefined;
    return this.openChild(ev, t, {
      key: cardKey(ev.session, ev.id),
      kind: 'card',
      parent,
      orphan: `card:${ev.id}`,
      spanId: cardSpanId(ev.id),
      name: `attention ${typeof ev.data.kind === 'string' ? ev.data.kind : 'other'}`,
      startKnown: true,
      attributes: cardStartAttrs(ev),
    });
  }

  private openDelegation(ev: AepEvent, t: number, startKnown: boolean): Unit | undefined {
    const child = ev.subject;
    if (!child) return undefined;
    const unit = this.openChild(ev, t, {
      key: delegationKey(ev.session, child),
      kind: 'delegation',
      parent: this.runParent(ev),
      orphan: `delegation:${child}`,
      spanId: delegationSpanId(ev.session, child),
      name: 'invoke_agent hermes.subagent',
      startKnown,
      attributes: delegationStartAttrs(ev),
    });
    if (unit) this.delegatedBy.set(child, unit.ctx);
    return unit;
  }

  private runParent(ev: AepEvent): SpanCtx | undefined {
    return ev.run ? this.runCtx(ev.session, ev.run) : undefined;
  }

  /** A unit under a parent span (or, with none, in a trace of its own): reused while open, never reopened once closed. */
  private openChild(
    ev: AepEvent,
    t: number,
    c: { key: string; kind: UnitKind; parent: SpanCtx | undefined; orphan: string; spanId: string; name: string; startKnown: boolean; attributes: Attrs },
  ): Unit | undefined {
    const existing = this.open.get(c.key);
    if (existing) return existing;
    if (!this.mayOpen(c.key)) return undefined;
    const traceId = c.parent?.traceId ?? orphanTraceId(ev.session, c.orphan);
    return this.create({
      key: c.key,
      kind: c.kind,
      session: ev.session,
      ctx: this.ctxOf(traceId, c.spanId, c.kind),
      parentSpanId: c.parent?.spanId,
      name: c.name,
      startMs: t,
      startKnown: c.startKnown,
      attributes: c.attributes,
    });
  }

  /** A unit may open unless it was already closed (then its late events are counted, not re-spanned). */
  private mayOpen(key: string): boolean {
    if (!this.closedMap.has(key)) return true;
    this.counters.late++;
    return false;
  }

  private create(u: Omit<Unit, 'lastMs' | 'events' | 'droppedEvents' | 'links' | 'status'>): Unit {
    const unit: Unit = { ...u, lastMs: u.startMs, events: [], droppedEvents: 0, links: [], status: { code: 'unset' } };
    if (!u.startKnown) unit.attributes['aep.start_unknown'] = true;
    this.open.set(u.key, unit);
    let same = this.bySession.get(u.session);
    if (!same) this.bySession.set(u.session, (same = new Set()));
    same.add(unit);
    return unit;
  }

  private addEvent(unit: Unit, ev: AepEvent, t: number): void {
    unit.lastMs = Math.max(unit.lastMs, t);
    const attributes: Attrs = { 'aep.event_id': ev.id, 'aep.sequence': ev.seq, 'aep.epoch': ev.epoch };
    if (ev.cause) attributes['aep.cause'] = ev.cause;
    // content rides only where BOTH the event and the exporter allow redacted+
    const level = minCapture(ev.capture, this.opts.ceiling);
    if (captureRank(level) >= captureRank('redacted')) {
      const data = downlevel(ev as unknown as CaptureEvent, level).data;
      if (data && Object.keys(data).length > 0) {
        const json = JSON.stringify(data);
        // bounded: open spans hold their events in memory until they end
        if (json.length <= MAX_DATA_CHARS) attributes['aep.data'] = json;
        else attributes['aep.data.omitted_chars'] = json.length;
      }
    }
    if (unit.events.length < this.maxEvents) unit.events.push({ name: ev.type, timeMs: t, attributes });
    else unit.droppedEvents++;
    // a cause in ANOTHER unit (not this span, not its parent) becomes a link
    const cause = ev.cause ? this.eventCtx.get(ev.cause) : undefined;
    if (cause && cause.spanId !== unit.ctx.spanId && cause.spanId !== unit.parentSpanId && !unit.links.some((l) => l.spanId === cause.spanId)) {
      unit.links.push({
        traceId: cause.traceId,
        spanId: cause.spanId,
        sampled: cause.sampled,
        attributes: { 'aep.link.type': 'cause', 'aep.cause_event_id': ev.cause! },
      });
    }
    this.eventCtx.set(ev.id, unit.ctx);
  }

  private finish(unit: Unit, endMs: number, outcome: Outcome): SpanRecord {
    this.open.delete(unit.key);
    const same = this.bySession.get(unit.session);
    same?.delete(unit);
    if (same?.size === 0) this.bySession.delete(unit.session);
    this.closedMap.set(unit.key, true);
    this.counters.finished++;
    const attributes = { ...unit.attributes };
    if (outcome !== 'complete') {
      this.counters.incomplete++;
      attributes['aep.incomplete'] = true;
      attributes['aep.incomplete.reason'] = outcome;
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

  /** Close the session's other open runs, and their children, as incomplete (`superseded`). */
  private supersede(session: string, run: string, t: number): SpanRecord[] {
    const own = [...(this.bySession.get(session) ?? [])];
    const stale = own.filter((u) => u.kind === 'run' && u.key !== runKey(session, run));
    if (stale.length === 0) return [];
    const traces = new Set(stale.map((u) => u.ctx.traceId));
    const units = own.filter((u) => traces.has(u.ctx.traceId));
    units.sort((a, b) => ORDER.indexOf(a.kind) - ORDER.indexOf(b.kind));
    return units.map((u) => this.finish(u, u.lastMs, 'superseded'));
  }

  /** The session's end closes every unit it left open, children before their parents. */
  private closeSession(session: string, t: number): SpanRecord[] {
    const units = [...(this.bySession.get(session) ?? [])];
    units.sort((a, b) => ORDER.indexOf(a.kind) - ORDER.indexOf(b.kind));
    return units.map((u) => this.finish(u, t, 'session_ended'));
  }

  private evictOverflow(): SpanRecord[] {
    const out: SpanRecord[] = [];
    while (this.open.size > this.maxOpen) {
      const oldest = this.open.shift()![1];
      this.counters.evicted++;
      out.push(this.finish(oldest, oldest.lastMs, 'evicted'));
    }
    return out;
  }
}

const runKey = (s: string, r: string) => `run\u0000${s}\u0000${r}`;
const toolKey = (s: string, c: string) => `tool\u0000${s}\u0000${c}`;
/** a card's outcomes come on its own session's lane (the identity stage pairs them there) */
const cardKey = (s: string, requestId: string) => `card\u0000${s}\u0000${requestId}`;
/** The session a unit key names. */
function sessionOfKey(key: string): string | undefined {
  const a = key.indexOf('\u0000');
  const b = key.indexOf('\u0000', a + 1);
  return a < 0 || b < 0 ? undefined : key.slice(a + 1, b);
}
const delegationKey = (s: string, c: string) => `delegation\u0000${s}\u0000${c}`;

function callId(ev: AepEvent): string | undefined {
  const id = (ev.data.tool as Record<string, unknown> | undefined)?.call_id;
  return typeof id === 'string' && id.length > 0 ? id : undefined;
}

function toolName(ev: AepEvent): string | undefined {
  const n = (ev.data.tool as Record<string, unknown> | undefined)?.name;
  return typeof n === 'string' && /^[A-Za-z0-9_.:-]{1,128}$/.test(n) ? n : undefined;
}

/** The kind of unit an AEP type belongs to, if it has one. */
function ownKind(type: string): UnitKind | undefined {
  if (type.startsWith('run.')) return 'run';
  if (type.startsWith('tool.')) return 'tool';
  if (type.startsWith('attention.')) return 'card';
  if (type.startsWith('delegation.')) return 'delegation';
  return undefined;
}

function isTerminal(type: string, kind: UnitKind): boolean {
  switch (kind) {
    case 'run':
      return type === 'run.finished' || type === 'run.cancelled' || type === 'run.failed';
    case 'tool':
      return type === 'tool.completed' || type === 'tool.failed' || type === 'tool.denied';
    case 'card':
      return type === 'attention.resolved' || type === 'attention.timeout';
    case 'delegation':
      return type === 'delegation.subagent.stopped';
  }
}
