import { UNKNOWN_SESSION, type AepEvent } from '../aep/event.js';
import { familyOf, isOpening, isTerminalOf, X_HERMES, type UnitKind } from '../aep/lifecycle.js';
import type { CaptureLevel } from '../core/capture-levels.js';
import { RecencyMap } from '../util/recency-map.js';
import { LINK_ATTR, SPAN_ATTR } from './attribute-catalogue.js';
import { builderStateJson, LETTER_KIND, type BuilderCapture, type BuilderState, type Columns } from './builder-state.js';
import { cardSpanId, chatSpanId, delegationSpanId, orphanTraceId, toolSpanId } from './ids.js';
import { MAX_REMEMBERED } from './memory-bounds.js';
import { OpenUnits, type BuilderCounters, type NewUnit, type Unit } from './open-units.js';
import type { TraceSampler } from './sampler.js';
import { cardStartAttrs, chatAttrs, delegationStartAttrs, runStartAttrs, terminalAttrs, toolStartAttrs } from './span-attributes.js';
import { contentAttrs, visibleData } from './span-content.js';
import { spanEventAttrs } from './span-event.js';
import { SpanContexts, type SpanCtx } from './span-contexts.js';
import type { SpanRecord } from './span-record.js';
import { callId, toolName, unitKey } from './unit-keys.js';

export type { BuilderCounters } from './open-units.js';

export type { SpanCtx } from './span-contexts.js';

export interface BuilderOptions {
  readonly sampler: TraceSampler;
  /** the exporter's own ceiling (AEP_OTEL_CAPTURE): span events carry event data only at redacted+ */
  readonly ceiling: CaptureLevel;
  readonly maxOpenUnits?: number;
  readonly maxEventsPerSpan?: number;
}

/** A child unit to open: under `parent`, or with none in a trace of its own (named by `orphan`). */
interface ChildUnit extends Omit<NewUnit, 'session' | 'ctx' | 'parentSpanId' | 'startMs'> {
  readonly parent: SpanCtx | undefined;
  readonly orphan: string;
  readonly spanId: string;
}

/**
 * Derives spans from the AEP stream (AEP-0005 §3.1's start/finish synthesis
 * via `cause`): one span per lifecycle unit (run, tool call, attention card,
 * delegation; the families of src/aep/lifecycle.ts), each AEP event a span
 * event on its unit's span, cause links across units. Pure state machine: no
 * I/O, no clock (callers pass `now` to `sweep`); it returns finished spans,
 * it does not export them.
 */
export class SpanBuilder {
  private readonly units: OpenUnits;
  readonly counters: BuilderCounters;
  private readonly eventCtx = new RecencyMap<string, SpanCtx>(MAX_REMEMBERED);
  private readonly lastRun = new RecencyMap<string, SpanCtx>(MAX_REMEMBERED);
  private readonly delegatedBy = new RecencyMap<string, SpanCtx>(MAX_REMEMBERED);
  /** run key → its latest model call's chat span: the tool calls that follow are that call's (Hermes runs them before its next call) */
  private readonly lastChat = new RecencyMap<string, SpanCtx>(MAX_REMEMBERED);
  /** last event time per session: a unit is idle when its whole session is */
  private readonly sessionLast = new RecencyMap<string, number>(MAX_REMEMBERED);
  private readonly maxEvents: number;
  private readonly ctx: SpanContexts;

  constructor(private readonly opts: BuilderOptions) {
    this.ctx = new SpanContexts(opts.sampler);
    this.units = new OpenUnits(opts.maxOpenUnits ?? 10_000);
    this.counters = this.units.counters;
    this.maxEvents = opts.maxEventsPerSpan ?? 512;
  }

  get openUnits(): number {
    return this.units.size;
  }

  /**
   * Take one event: returns the span context it belongs to (for its
   * `traceparent`), and the spans this event finished.
   */
  accept(ev: AepEvent): { ctx?: SpanCtx; finished: SpanRecord[] } {
    const t = Date.parse(ev.time);
    this.sessionLast.set(ev.session, Math.max(t, this.sessionLast.get(ev.session) ?? t));
    if (ev.type === X_HERMES.modelCall) return this.chat(ev, t);
    const finished: SpanRecord[] = [];
    const family = familyOf(ev.type);
    let unit: Unit | undefined;
    if (family === 'session') {
      if (isTerminalOf(ev.type, 'session')) finished.push(...this.units.closeSession(ev.session, t));
    } else if (family) {
      if (family === 'run' && isOpening(ev.type) && ev.run) {
        // a session runs one turn at a time: an older run still open never got its terminal
        // (a failed model call ends a Hermes turn without on_session_end), so it closes here
        finished.push(...this.units.supersede(ev.session, ev.run));
      }
      unit = this.unitOf(family, ev, t);
    }
    // events of no unit of their own ride on their run's span
    unit ??= ev.run ? this.units.get(unitKey('run', ev.session, ev.run)) : undefined;
    if (!unit) {
      this.counters.unattached++;
      return { finished };
    }
    // the event's data as the exporter may show it, down-leveled once for the span event and the content attributes
    const data = visibleData(ev, this.opts.ceiling);
    this.addEvent(unit, ev, t, data);
    Object.assign(unit.attributes, contentAttrs(ev, data));
    // outcome attributes only from the unit's OWN events (a tool failure riding
    // on its run for want of a call id must not mark the run failed)
    if (family === unit.kind || (unit.kind === 'run' && ev.type === X_HERMES.apiError)) {
      const { attrs, status } = terminalAttrs(ev);
      Object.assign(unit.attributes, attrs);
      if (status) unit.status = status;
    }
    if (isTerminalOf(ev.type, unit.kind)) finished.push(this.units.finish(unit, t, 'complete'));
    finished.push(...this.units.evictOverflow());
    return { ctx: unit.ctx, finished };
  }

  /**
   * The unit an event of a unit family belongs to: its opening opens it (or
   * finds it open); a later event finds it, and a run, tool or delegation
   * whose opening was never seen opens with its start unknown.
   */
  private unitOf(family: UnitKind, ev: AepEvent, t: number): Unit | undefined {
    const opening = isOpening(ev.type);
    switch (family) {
      case 'run':
        if (!ev.run) return undefined;
        return opening ? this.openRun(ev, t) : (this.units.get(unitKey('run', ev.session, ev.run)) ?? this.openRun(ev, t, false));
      case 'tool': {
        const id = callId(ev);
        // a reused call id (Hermes derives ids when a provider omits them) is a new call
        if (opening && id) this.units.reuse(unitKey('tool', ev.session, id));
        if (opening) return this.openTool(ev, t, true);
        return id ? (this.units.get(unitKey('tool', ev.session, id)) ?? this.openTool(ev, t, false)) : undefined;
      }
      case 'card':
        if (opening) return this.openCard(ev, t);
        return ev.subject ? this.units.get(unitKey('card', ev.session, ev.subject)) : undefined;
      case 'delegation':
        if (opening) return this.openDelegation(ev, t, true);
        return ev.subject ? (this.units.get(unitKey('delegation', ev.session, ev.subject)) ?? this.openDelegation(ev, t, false)) : undefined;
    }
  }

  /**
   * The builder's memory for the start-up snapshot, captured at once: open
   * units copied, the lookups as key and value columns, each in its own
   * order. Cheap (the span contexts are shared, they never change); turning
   * it into JSON (`builderStateJson`) can then happen in slices.
   */
  captureState(): BuilderCapture {
    const { units, closed } = this.units.capture();
    const cols = <V>(m: RecencyMap<string, V>): [string[], V[]] => [[...m.keys()], [...m.values()]];
    return {
      units,
      eventCtx: cols(this.eventCtx),
      lastRun: cols(this.lastRun),
      delegatedBy: cols(this.delegatedBy),
      lastChat: cols(this.lastChat),
      sessionLast: cols(this.sessionLast),
      closed,
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
    if (!this.units.fresh || this.eventCtx.size > 0) throw new Error('loadState needs a fresh builder');
    const [traces, spans, kinds] = state.ctx;
    const ctx = traces.map((traceId, i) => this.ctx.of(traceId, spans[i]!, LETTER_KIND[kinds[i]!]!));
    this.units.load(state.units, state.closed, ctx, (traceId) => this.ctx.sampled(traceId), keep);
    const deref = ([keys, values]: Columns<number>): [string[], SpanCtx[]] => [keys, values.map((i) => ctx[i]!)];
    this.eventCtx.load(...deref(state.eventCtx));
    this.lastRun.load(...deref(state.lastRun), keep);
    this.delegatedBy.load(...deref(state.delegatedBy));
    if (state.lastChat) this.lastChat.load(...deref(state.lastChat));
    this.sessionLast.load(...state.sessionLast, keep);
  }

  /**
   * Close every unit whose session has been silent for longer than `idleMs`
   * (Hermes killed, a hook timed out: a terminal that will never come). Each
   * ends at its own last event.
   */
  sweep(nowMs: number, idleMs: number): SpanRecord[] {
    return this.units.sweep(nowMs, idleMs, (session) => this.sessionLast.get(session));
  }

  /**
   * A model call (`x.hermes.model.call`) is a whole `chat {model}` span the
   * moment its event arrives: a child of its turn, timed by the call's own
   * start and end (Hermes reports both), the event on it. Its provider is the
   * turn's too, once known (the turn span started before any model call).
   */
  private chat(ev: AepEvent, t: number): { ctx?: SpanCtx; finished: SpanRecord[] } {
    if (!ev.run) {
      this.counters.unattached++;
      return { finished: [] };
    }
    const runKey = unitKey('run', ev.session, ev.run);
    const run = this.units.get(runKey);
    const parent = run?.ctx ?? this.ctx.run(ev.session, ev.run);
    const ctx = this.ctx.of(parent.traceId, chatSpanId(ev.session, ev.id), 'chat');
    const d = ev.data;
    const data = visibleData(ev, this.opts.ceiling);
    const time = (v: unknown): number | undefined => (typeof v === 'string' ? Date.parse(v) : Number.NaN) || undefined;
    const endMs = time(d.ended_at) ?? t;
    const startMs = Math.min(endMs, time(d.started_at) ?? endMs - (typeof d.duration_ms === 'number' ? d.duration_ms : 0));
    const model = typeof d.model === 'string' ? d.model : undefined;
    const provider = typeof d.provider === 'string' ? d.provider : undefined;
    if (run) {
      run.lastMs = Math.max(run.lastMs, t);
      if (provider && run.attributes[SPAN_ATTR.providerName] === undefined) run.attributes[SPAN_ATTR.providerName] = provider;
    }
    this.lastChat.set(runKey, ctx);
    this.eventCtx.set(ev.id, ctx);
    this.counters.finished++;
    const record: SpanRecord = {
      name: `chat ${model ?? 'unknown'}`,
      traceId: ctx.traceId,
      spanId: ctx.spanId,
      parentSpanId: parent.spanId,
      sampled: ctx.sampled,
      startMs,
      endMs,
      attributes: { ...chatAttrs(ev), ...contentAttrs(ev, data) },
      events: [{ name: ev.type, timeMs: t, attributes: spanEventAttrs(ev, data) }],
      droppedEvents: 0,
      links: [],
      status: { code: 'unset' },
    };
    return { ctx, finished: [record] };
  }

  private openRun(ev: AepEvent, t: number, startKnown = true): Unit | undefined {
    const key = unitKey('run', ev.session, ev.run!);
    const existing = this.units.get(key);
    if (existing) return existing;
    if (!this.units.mayOpen(key)) return undefined;
    const ctx = this.ctx.run(ev.session, ev.run!);
    const unit = this.units.create({
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
    if (prev && prev.spanId !== ctx.spanId) unit.links.push({ ...prev, attributes: { [LINK_ATTR.linkType]: 'previous_run' } });
    const parent = this.delegatedBy.get(ev.session);
    if (parent) unit.links.push({ ...parent, attributes: { [LINK_ATTR.linkType]: 'delegated_by' } });
    this.lastRun.set(ev.session, ctx);
    return unit;
  }

  private openTool(ev: AepEvent, t: number, startKnown: boolean): Unit | undefined {
    const id = callId(ev);
    if (!id) return undefined;
    const unit = this.openChild(ev, t, {
      key: unitKey('tool', ev.session, id),
      kind: 'tool',
      parent: this.runParent(ev),
      orphan: `tool:${id}`,
      // from the opening event's id: unique even when a call id is reused, stable across replay
      spanId: toolSpanId(ev.session, ev.id),
      name: `execute_tool ${toolName(ev) ?? 'unknown'}`,
      startKnown,
      attributes: toolStartAttrs(ev),
    });
    // the model call that asked for this tool call
    const chat = ev.run ? this.lastChat.get(unitKey('run', ev.session, ev.run)) : undefined;
    if (unit && chat && unit.events.length === 0 && !unit.links.some((l) => l.spanId === chat.spanId)) {
      unit.links.push({ ...chat, attributes: { [LINK_ATTR.linkType]: 'model_call' } });
    }
    return unit;
  }

  private openCard(ev: AepEvent, t: number): Unit | undefined {
    // child of the tool span it belongs to (its cause), else of its run
    const cause = ev.cause ? this.eventCtx.get(ev.cause) : undefined;
    // the unknown lane (approvals no session claimed) has no run spans to hang a card under
    const parent = cause?.kind === 'tool' ? cause : ev.session !== UNKNOWN_SESSION ? this.runParent(ev) : undefined;
    return this.openChild(ev, t, {
      key: unitKey('card', ev.session, ev.id),
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
      key: unitKey('delegation', ev.session, child),
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
    return ev.run ? this.ctx.run(ev.session, ev.run) : undefined;
  }

  /** A unit under a parent span (or, with none, in a trace of its own): reused while open, never reopened once closed. */
  private openChild(ev: AepEvent, t: number, c: ChildUnit): Unit | undefined {
    const existing = this.units.get(c.key);
    if (existing) return existing;
    if (!this.units.mayOpen(c.key)) return undefined;
    const traceId = c.parent?.traceId ?? orphanTraceId(ev.session, c.orphan);
    return this.units.create({
      key: c.key,
      kind: c.kind,
      session: ev.session,
      ctx: this.ctx.of(traceId, c.spanId, c.kind),
      parentSpanId: c.parent?.spanId,
      name: c.name,
      startMs: t,
      startKnown: c.startKnown,
      attributes: c.attributes,
    });
  }

  private addEvent(unit: Unit, ev: AepEvent, t: number, data: Record<string, unknown> | undefined): void {
    unit.lastMs = Math.max(unit.lastMs, t);
    if (unit.events.length < this.maxEvents) unit.events.push({ name: ev.type, timeMs: t, attributes: spanEventAttrs(ev, data) });
    else unit.droppedEvents++;
    // a cause in ANOTHER unit (not this span, not its parent) becomes a link
    const cause = ev.cause ? this.eventCtx.get(ev.cause) : undefined;
    if (cause && cause.spanId !== unit.ctx.spanId && cause.spanId !== unit.parentSpanId && !unit.links.some((l) => l.spanId === cause.spanId)) {
      unit.links.push({
        traceId: cause.traceId,
        spanId: cause.spanId,
        sampled: cause.sampled,
        attributes: { [LINK_ATTR.linkType]: 'cause', [LINK_ATTR.causeEventId]: ev.cause! },
      });
    }
    this.eventCtx.set(ev.id, unit.ctx);
  }
}
