import { extraOf, str, type HookEnvelope } from '../hermes/envelope.js';
import { CLARIFY_TOOL } from '../mapping/clarify.js';
import { levelFor, type CapturePolicy } from '../capture/policy.js';
import type { MappedEvent } from '../mapping/types.js';
import { UNKNOWN_SESSION, type AepEvent } from '../aep/event.js';
import { X_HERMES, isOutcome, isSessionScoped, isTerminalOf, severityOf } from '../aep/lifecycle.js';
import { hermesExtensions } from './extensions.js';
import { MAX_ENDED_RUNS_PER_SESSION, MAX_PENDING_PER_SESSION, boundedAdd, boundedSet, newLane, type PendingCard, type SessionLane } from './lanes.js';
import { decodeLane, encodeLane, isDormant, type DormantLane } from './lane-state.js';

export interface IdentityOptions {
  readonly epoch: number;
  /** host part of the `source` URI */
  readonly host: string;
  readonly policy: CapturePolicy;
  readonly newId: () => string;
  /** lanes kept in memory; least recently seen ended lanes go first */
  readonly maxSessions?: number;
  /** sessions already ended, remembered beyond the lanes (persisted by the daemon) */
  readonly ended?: { has(session: string): boolean; add(session: string): void };
}

/** Counters a supervisor reads from `/healthz`. */
export interface IdentityCounters {
  events: number;
  duplicateStarts: number;
  duplicateTerminals: number;
  unpairedTerminals: number;
  unknownLane: number;
  evictions: number;
  /** card outcomes for a clarify that raised no card (no question): nothing to close */
  suppressed: number;
}

const APPROVAL_HOOKS = new Set(['pre_approval_request', 'post_approval_response']);

/**
 * The identity stage: gives each mapped event its session, run, seq, epoch,
 * cause and (for attention lifecycles, AEP-0002 §7.1) subject, and enforces
 * terminal exclusivity. It owns every piece of pairing state; it does no I/O
 * and reads no clock (the caller passes `now`).
 */
export class IdentityStage {
  readonly counters: IdentityCounters = {
    events: 0,
    duplicateStarts: 0,
    duplicateTerminals: 0,
    unpairedTerminals: 0,
    unknownLane: 0,
    evictions: 0,
    suppressed: 0,
  };
  /** live lanes and dormant ones (see lane-state.ts), in one recency order */
  private readonly lanes = new Map<string, SessionLane | DormantLane>();
  /** dormant lanes whose text could not be read back: they start afresh (counted, never a crash) */
  dormantErrors = 0;
  /** seq high-water marks of evicted lanes, so a returning session never reuses a seq in this epoch */
  private readonly seqFloor = new Map<string, number>();
  private readonly maxSessions: number;
  /** highest seq any evicted lane reached, and the start for new lanes once a floor was forgotten */
  private maxSeqEvicted = 0;
  private forgottenFloor = 0;

  constructor(private readonly opts: IdentityOptions) {
    this.maxSessions = opts.maxSessions ?? 10_000;
  }

  get activeSessions(): number {
    let n = 0;
    for (const lane of this.lanes.values()) if (!lane.ended && lane.session !== UNKNOWN_SESSION) n++;
    return n;
  }

  process(env: HookEnvelope, mapped: readonly MappedEvent[], now: Date): AepEvent[] {
    const t = now.getTime();
    const lane = this.laneFor(env, t);
    const x = extraOf(env);
    const turn = str(x.turn_id) ?? str(x.parent_turn_id);
    const out: AepEvent[] = [];
    const emit = (m: MappedEvent, extra: { run?: string | undefined; cause?: string | undefined; subject?: string | undefined } = {}): AepEvent => {
      const run = isSessionScoped(m.type) ? undefined : 'run' in extra ? extra.run : (turn ?? lane.currentRun);
      const subject = extra.subject ?? m.subject;
      const capture = levelFor(this.opts.policy, m.type);
      const ev: AepEvent = {
        aep: '0.1',
        id: this.opts.newId(),
        type: m.type,
        time: now.toISOString(),
        source: `aep://${this.opts.host}/agent/hermes/session/${encodeURIComponent(lane.session)}`,
        agent: 'hermes',
        session: lane.session,
        ...(run !== undefined ? { run } : {}),
        seq: lane.seq++,
        epoch: this.opts.epoch,
        ...(extra.cause !== undefined ? { cause: extra.cause } : {}),
        ...(subject !== undefined ? { subject } : {}),
        severity: severityOf(m.type),
        capture,
        // vendor facts are metadata: not at `none`
        ...(capture === 'none' ? {} : hermesExtensions(env, m.type)),
        // `none` is envelope only (AEP-0001 §8.2): not even structural payload
        data: capture === 'none' ? {} : m.data,
      };
      out.push(ev);
      this.counters.events++;
      return ev;
    };

    for (const m of mapped) this.pair(env, lane, m, t, emit);
    return out;
  }

  private pair(
    env: HookEnvelope,
    lane: SessionLane,
    m: MappedEvent,
    t: number,
    emit: (m: MappedEvent, extra?: { run?: string | undefined; cause?: string | undefined; subject?: string | undefined }) => AepEvent,
  ): void {
    const x = extraOf(env);
    const callId = str(x.tool_call_id);
    const turn = str(x.turn_id);
    const isApproval = APPROVAL_HOOKS.has(env.hook_event_name);

    if (m.type === 'session.started') {
      const ev = emit(m);
      lane.startedId ??= ev.id;
      return;
    }
    if (m.type === 'session.ended') {
      // A session never ends with a card its emitter raised still pending, and
      // a resumed session finalized again still closes what it raised since.
      const dismissed = { type: 'attention.resolved', data: { resolution: 'dismissed' } };
      for (const card of [...lane.approvals, ...lane.clarify.values()]) {
        emit(dismissed, { run: card.run, cause: card.id, subject: card.id });
      }
      lane.approvals.length = 0;
      lane.clarify.clear();
      if (lane.ended) {
        this.counters.duplicateTerminals++;
        return;
      }
      emit(m, { cause: lane.startedId });
      lane.ended = true;
      this.opts.ended?.add(lane.session);
      return;
    }
    if (m.type === 'run.started') {
      const run = turn;
      if (run && (lane.openRuns.has(run) || lane.endedRuns.has(run))) {
        this.counters.duplicateStarts++;
        return;
      }
      const ev = emit(m, { run });
      if (run) {
        if (boundedSet(lane.openRuns, run, ev.id, MAX_PENDING_PER_SESSION)) this.counters.evictions++;
        lane.currentRun = run;
      }
      return;
    }
    if (isTerminalOf(m.type, 'run')) {
      const run = turn ?? lane.currentRun;
      if (run && lane.endedRuns.has(run)) {
        this.counters.duplicateTerminals++;
        return;
      }
      const cause = run ? lane.openRuns.get(run) : undefined;
      if (!cause) this.counters.unpairedTerminals++;
      emit(m, { run, cause });
      if (run) {
        lane.openRuns.delete(run);
        boundedAdd(lane.endedRuns, run, MAX_ENDED_RUNS_PER_SESSION);
        if (lane.currentRun === run) lane.currentRun = [...lane.openRuns.keys()].pop();
      }
      return;
    }
    if (m.type === 'tool.requested') {
      // a call id can be reused (Hermes derives ids when a provider omits them): a new request is a new call
      if (callId) lane.endedTools.delete(callId);
      const ev = emit(m);
      if (callId && boundedSet(lane.tools, callId, ev.id, MAX_PENDING_PER_SESSION)) this.counters.evictions++;
      // a clarify card, if one is raised, follows in this same batch and clears the mark
      if (callId && env.tool_name === CLARIFY_TOOL) boundedAdd(lane.noCard, callId, MAX_PENDING_PER_SESSION);
      return;
    }
    if (isTerminalOf(m.type, 'tool')) {
      if (callId && lane.endedTools.has(callId)) {
        this.counters.duplicateTerminals++;
        return;
      }
      const cause = callId ? lane.tools.get(callId) : undefined;
      if (!cause) this.counters.unpairedTerminals++;
      if (callId) {
        lane.tools.delete(callId);
        boundedAdd(lane.endedTools, callId, MAX_ENDED_RUNS_PER_SESSION);
      }
      emit(m, { cause });
      return;
    }
    if (m.type === 'attention.requested') {
      if (isApproval) {
        // raised inside a tool call: caused by it when the payload names it
        const ev = emit(m, { cause: callId ? lane.tools.get(callId) : undefined });
        lane.approvals.push({ id: ev.id, time: t, key: approvalKey(x), toolCallId: callId, run: ev.run });
        if (lane.approvals.length > MAX_PENDING_PER_SESSION) {
          lane.approvals.shift();
          this.counters.evictions++;
        }
      } else {
        // the clarify form card: caused by its own tool.requested
        if (callId) lane.noCard.delete(callId);
        const ev = emit(m, { cause: callId ? lane.tools.get(callId) : undefined });
        if (callId && boundedSet(lane.clarify, callId, { id: ev.id, time: t, key: callId, run: ev.run }, MAX_PENDING_PER_SESSION)) {
          this.counters.evictions++;
        }
      }
      return;
    }
    if (isOutcome(m.type, 'card')) {
      const card = isApproval ? takeApproval(lane, approvalKey(x), callId) : takeClarify(lane, callId);
      if (!card) {
        if (!isApproval && callId && lane.noCard.delete(callId)) {
          // a clarify without a question raised no card: there is nothing to close
          this.counters.suppressed++;
          return;
        }
        // No request seen (evicted, or raised before the replay window): an
        // attention terminal MUST name its request (AEP-0002 §7.1), which is
        // unknown here, so the fact rides the vendor plane, structural only.
        this.counters.unpairedTerminals++;
        emit(unpairedCard(m));
        return;
      }
      const latency = Math.max(0, Math.round(t - card.time));
      const data = m.type === 'attention.timeout' ? { ...m.data, after_ms: latency } : m.data;
      const ev = emit({ ...m, data }, { cause: card.id, subject: card.id });
      if (m.type === 'attention.answered') {
        emit({ type: 'attention.resolved', data: { resolution: 'answered', latency_ms: latency } }, { cause: ev.id, subject: card.id });
      }
      return;
    }
    if (isApproval) {
      // an approval hook that is no card (the smart review, Hermes 0.19.0): caused by its tool call
      emit(m, { cause: callId ? lane.tools.get(callId) : undefined });
      return;
    }
    if (m.type === 'delegation.subagent.started') {
      const ev = emit(m);
      if (m.subject && boundedSet(lane.delegations, m.subject, ev.id, MAX_PENDING_PER_SESSION)) this.counters.evictions++;
      return;
    }
    if (m.type === 'delegation.subagent.stopped') {
      const cause = m.subject ? lane.delegations.get(m.subject) : undefined;
      if (!cause) this.counters.unpairedTerminals++;
      if (m.subject) lane.delegations.delete(m.subject);
      emit(m, { cause });
      return;
    }
    emit(m);
  }

  /**
   * Rebuild pairing state from an event a previous process emitted (read back
   * from the durable log at start), so terminals arriving after a restart
   * still find their starts. Emits nothing; `seq` needs no restoring, since
   * the new process runs in a new epoch.
   */
  restore(ev: AepEvent): void {
    if (!ev.session) return;
    let lane = this.live(ev.session);
    const t = Date.parse(ev.time);
    if (!lane) {
      lane = newLane(ev.session, t);
      lane.ended = this.opts.ended?.has(ev.session) ?? false;
      this.lanes.set(ev.session, lane);
      this.evictIfFull(ev.session);
    }
    const callId = (ev.data?.tool as { call_id?: unknown } | undefined)?.call_id;
    switch (ev.type) {
      case 'session.started':
        lane.startedId ??= ev.id;
        return;
      case 'session.ended':
        lane.ended = true;
        this.opts.ended?.add(ev.session);
        lane.approvals.length = 0;
        lane.clarify.clear();
        return;
      case 'run.started':
        if (ev.run) {
          boundedSet(lane.openRuns, ev.run, ev.id, MAX_PENDING_PER_SESSION);
          lane.currentRun = ev.run;
        }
        return;
      case 'tool.requested':
        if (typeof callId === 'string') {
          lane.endedTools.delete(callId);
          boundedSet(lane.tools, callId, ev.id, MAX_PENDING_PER_SESSION);
        }
        return;
      case 'attention.requested':
        if (ev.data.kind === 'form' && ev.subject) {
          boundedSet(lane.clarify, ev.subject, { id: ev.id, time: t, key: ev.subject, run: ev.run }, MAX_PENDING_PER_SESSION);
        } else if (ev.data.kind === 'permission' && ev.subject) {
          // approvals on a session lane were joined by session_key = the session id
          lane.approvals.push({ id: ev.id, time: t, key: `${ev.session}|${ev.subject}`, run: ev.run });
          if (lane.approvals.length > MAX_PENDING_PER_SESSION) lane.approvals.shift();
        }
        return;
      case 'delegation.subagent.started':
        if (ev.subject) boundedSet(lane.delegations, ev.subject, ev.id, MAX_PENDING_PER_SESSION);
        return;
      case 'delegation.subagent.stopped':
        if (ev.subject) lane.delegations.delete(ev.subject);
        return;
      default:
        break;
    }
    if (isTerminalOf(ev.type, 'run') && ev.run) {
      lane.openRuns.delete(ev.run);
      boundedAdd(lane.endedRuns, ev.run, MAX_ENDED_RUNS_PER_SESSION);
      if (lane.currentRun === ev.run) lane.currentRun = [...lane.openRuns.keys()].pop();
    } else if (isTerminalOf(ev.type, 'tool') && typeof callId === 'string') {
      lane.tools.delete(callId);
      boundedAdd(lane.endedTools, callId, MAX_ENDED_RUNS_PER_SESSION);
    } else if (isOutcome(ev.type, 'card') && ev.subject) {
      const i = lane.approvals.findIndex((c) => c.id === ev.subject);
      if (i >= 0) lane.approvals.splice(i, 1);
      for (const [k, c] of lane.clarify) if (c.id === ev.subject) lane.clarify.delete(k);
    }
  }

  /**
   * Every lane as JSON text, least recently seen first (the start-up
   * snapshot). Lanes used since the previous call are serialized and go
   * dormant; the others are already text. Synchronous.
   */
  saveLanes(): DormantLane[] {
    const out: DormantLane[] = [];
    for (const [session, slot] of this.lanes) {
      if (isDormant(slot)) {
        out.push(slot);
        continue;
      }
      const d: DormantLane = { session, ended: slot.ended, seq: slot.seq, dormant: encodeLane(slot) };
      this.lanes.set(session, d); // same key: keeps its place in the recency order
      out.push(d);
    }
    return out;
  }

  /**
   * Take back saved lanes, dormant, into a stage that holds none yet, in their
   * order, each with seq 0: the new process runs in a new epoch (AEP-0001 §7),
   * as after a replay. Lanes `keep` refuses are left out; past `maxSessions`
   * the least recently seen go, as at runtime.
   */
  loadLanes(lanes: Iterable<{ session: string; ended: boolean; dormant: string | Uint8Array }>, keep: (session: string) => boolean = () => true): void {
    if (this.lanes.size > 0) throw new Error('loadLanes needs a stage without lanes');
    for (const l of lanes) {
      if (!keep(l.session)) continue;
      const ended = l.ended || (this.opts.ended?.has(l.session) ?? false);
      this.lanes.delete(l.session);
      this.lanes.set(l.session, { session: l.session, ended, seq: 0, dormant: l.dormant });
      this.evictIfFull(l.session);
    }
  }

  /** The lane of a session in its live form (a dormant one is parsed where it stands), if there is one. */
  private live(session: string): SessionLane | undefined {
    const slot = this.lanes.get(session);
    if (slot === undefined || !isDormant(slot)) return slot;
    let lane: SessionLane;
    try {
      lane = decodeLane(slot.dormant, slot.seq, session);
    } catch {
      this.dormantErrors++;
      lane = newLane(session, 0);
      lane.seq = slot.seq;
    }
    lane.ended ||= slot.ended;
    this.lanes.set(session, lane);
    return lane;
  }

  /** The lane an envelope belongs to; approval payloads join by `session_key` or ride `unknown`. */
  private laneFor(env: HookEnvelope, now: number): SessionLane {
    let session = str(env.session_id);
    if (!session && APPROVAL_HOOKS.has(env.hook_event_name)) {
      const key = str(extraOf(env).session_key);
      if (key && this.lanes.has(key) && key !== UNKNOWN_SESSION) session = key;
    }
    if (!session) {
      session = UNKNOWN_SESSION;
      this.counters.unknownLane++;
    }
    let lane = this.live(session);
    if (lane) {
      this.lanes.delete(session); // re-insert: Map order is recency order
    } else {
      lane = newLane(session, now);
      lane.seq = this.seqFloor.get(session) ?? this.forgottenFloor;
      this.seqFloor.delete(session);
      lane.ended = this.opts.ended?.has(session) ?? false;
    }
    lane.lastSeen = now;
    this.lanes.set(session, lane);
    this.evictIfFull(session);
    return lane;
  }

  /**
   * Evict the least recently seen lanes (Map order is recency order), never
   * the one being handed back: its events are about to be stamped from it.
   */
  private evictIfFull(keep: string): void {
    while (this.lanes.size > this.maxSessions) {
      let victim: SessionLane | DormantLane | undefined;
      for (const lane of this.lanes.values()) {
        if (lane.session !== keep) {
          victim = lane;
          break;
        }
      }
      if (!victim) return;
      this.lanes.delete(victim.session);
      this.maxSeqEvicted = Math.max(this.maxSeqEvicted, victim.seq);
      // once a floor is forgotten, new lanes start above every seq an evicted lane reached
      if (boundedSet(this.seqFloor, victim.session, victim.seq, this.maxSessions * 10)) this.forgottenFloor = this.maxSeqEvicted;
      this.counters.evictions++;
    }
  }
}

/** An attention terminal whose request is unknown, as `x.hermes.attention.unpaired` (no free text). */
function unpairedCard(m: MappedEvent): MappedEvent {
  const answer = (m.data.answer ?? {}) as Record<string, unknown>;
  const data: Record<string, unknown> = { of: m.type };
  if (typeof m.data.resolution === 'string') data.resolution = m.data.resolution;
  if (typeof answer.option === 'string') data.option = answer.option;
  return { type: X_HERMES.attentionUnpaired, data, ...(m.subject ? { subject: m.subject } : {}) };
}

function approvalKey(x: Record<string, unknown>): string {
  return `${str(x.session_key) ?? ''}|${str(x.pattern_key) ?? ''}`;
}

/**
 * Post → pre by (session_key, pattern_key), `tool_call_id` breaking ties: an
 * exact call id match wins; a post naming a call id never takes a card raised
 * for a DIFFERENT call; otherwise the oldest candidate.
 */
function takeApproval(lane: SessionLane, key: string, callId: string | undefined): PendingCard | undefined {
  const candidates = lane.approvals.filter((c) => c.key === key);
  const card = callId ? (candidates.find((c) => c.toolCallId === callId) ?? candidates.find((c) => c.toolCallId === undefined)) : candidates[0];
  if (card) lane.approvals.splice(lane.approvals.indexOf(card), 1);
  return card;
}

function takeClarify(lane: SessionLane, callId: string | undefined): PendingCard | undefined {
  if (!callId) return undefined;
  const card = lane.clarify.get(callId);
  lane.clarify.delete(callId);
  return card;
}
