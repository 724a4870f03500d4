import { levelFor, type CapturePolicy } from '../capture/policy.js';
import type { AepEvent } from '../aep/event.js';
import { X_HERMES, isOutcome, isOutcomeEvent, isSessionScoped, isTerminalOf, severityOf, type OutcomeOf } from '../aep/lifecycle.js';
import type { HookKeys, KeyedEvent, MappedEvent } from '../aep/mapped.js';
import type { PendingCard, SessionLane } from './lanes.js';
import { runTotals } from './run-usage.js';

/** The decisions identity counts for `/healthz`. */
export type Decision = 'duplicateStarts' | 'duplicateTerminals' | 'unpairedTerminals' | 'suppressed';

/** What `decide` needs besides the lane: the epoch's constants, the clock's reading, and where it counts. */
export interface DecideContext {
  readonly epoch: number;
  /** host part of the `source` URI */
  readonly host: string;
  readonly policy: CapturePolicy;
  readonly newId: () => string;
  readonly now: Date;
  readonly count: (what: Decision) => void;
  /** calls that reached their terminal earlier in this hook without having raised a card */
  readonly closedWithoutCard: Set<string>;
}

export interface Extra {
  readonly run?: string | undefined;
  readonly cause?: string | undefined;
  readonly subject?: string | undefined;
}

/**
 * Identity for one mapped event: its lane, run, seq (from `lane.seq` on),
 * epoch, cause and (for attention lifecycles, AEP-0002 §7.1) subject, and
 * terminal exclusivity. Returns the events it becomes (none for a duplicate;
 * more for an answered card, which resolves, or a session end, which first
 * closes its pending cards). Reads the lane, never changes it: the caller
 * applies each returned event (apply.ts).
 */
export function decide(m: KeyedEvent, keys: HookKeys, lane: SessionLane, ctx: DecideContext): AepEvent[] {
  const out: AepEvent[] = [];
  const emit = (e: KeyedEvent, extra: Extra = {}): AepEvent => {
    const ev = stamp(e, keys, lane, ctx, lane.seq + out.length, extra);
    out.push(ev);
    return ev;
  };
  const callId = keys.callId;
  const approval = keys.approval !== undefined;

  if (m.type === 'session.started' && keys.rotatedFrom !== undefined && lane.startedId !== undefined) {
    // a rotated session's lineage opening, once: every later hook of the turn would open it again
    ctx.count('suppressed');
  } else if (m.type === 'session.ended') {
    // a session never ends with a card its emitter raised still pending, and a
    // resumed session finalized again still closes what it raised since
    for (const card of [...lane.approvals, ...lane.clarify.values()]) {
      emit({ type: 'attention.resolved', data: { resolution: 'dismissed' } }, { run: card.run, cause: card.id, subject: card.id });
    }
    if (lane.ended) ctx.count('duplicateTerminals');
    else emit(m, { cause: lane.startedId });
  } else if (m.type === 'run.started') {
    const run = keys.run;
    if (run && (lane.openRuns.has(run) || lane.endedRuns.has(run))) ctx.count('duplicateStarts');
    else emit(m, { run });
  } else if (isTerminalOf(m.type, 'run')) {
    const run = keys.run ?? lane.currentRun;
    if (run && lane.endedRuns.has(run)) ctx.count('duplicateTerminals');
    else emit(withTotals(m, run ? lane.usage.get(run) : undefined), { run, cause: paired(ctx, run ? lane.openRuns.get(run) : undefined) });
  } else if (isTerminalOf(m.type, 'tool')) {
    if (callId && lane.endedTools.has(callId)) ctx.count('duplicateTerminals');
    else {
      if (callId && lane.noCard.has(callId)) ctx.closedWithoutCard.add(callId);
      emit(m, { cause: paired(ctx, callId ? lane.tools.get(callId) : undefined) });
    }
  } else if (m.type === 'attention.requested' || (approval && !isOutcome(m.type, 'card'))) {
    // a card, or an approval hook that is no card (a model's review): caused by its tool call when the hook names it
    emit(m, { cause: m.cause ?? (callId ? lane.tools.get(callId) : undefined) });
  } else if (isOutcomeEvent(m, 'card')) {
    closeCard(m, keys, lane, ctx, emit);
  } else if (m.type === 'delegation.subagent.stopped') {
    emit(m, { cause: paired(ctx, m.subject ? lane.delegations.get(m.subject) : undefined) });
  } else {
    emit(m, { cause: m.cause });
  }
  return out;
}

/** A run's terminal with what its model calls add up to (AEP-0002 §5.2 usage and cost); as it came without any. */
function withTotals(m: KeyedEvent, usage: Parameters<typeof runTotals>[0]): KeyedEvent {
  const totals = runTotals(usage);
  return Object.keys(totals).length === 0 ? m : ({ ...m, data: { ...m.data, ...totals } } as KeyedEvent);
}

/** A terminal's cause, counting a terminal whose start is unknown. */
function paired(ctx: DecideContext, cause: string | undefined): string | undefined {
  if (!cause) ctx.count('unpairedTerminals');
  return cause;
}

type CardOutcomeEvent = Extract<KeyedEvent, { readonly type: OutcomeOf<'card'> }>;

function closeCard(m: CardOutcomeEvent, keys: HookKeys, lane: SessionLane, ctx: DecideContext, emit: (e: KeyedEvent, extra?: Extra) => AepEvent): void {
  const callId = keys.callId;
  const card = keys.approval ? findApproval(lane, keys.approval.key, callId) : callId ? lane.clarify.get(callId) : undefined;
  if (!card) {
    if (!keys.approval && callId && ctx.closedWithoutCard.has(callId)) {
      // a form call that raised no card (no question): there is nothing to close
      ctx.count('suppressed');
      return;
    }
    // No request seen (evicted, or raised before the replay window): an
    // attention terminal MUST name its request (AEP-0002 §7.1), which is
    // unknown here, so the fact rides the vendor plane, structural only.
    ctx.count('unpairedTerminals');
    emit(unpairedCard(m));
    return;
  }
  const latency = Math.max(0, Math.round(ctx.now.getTime() - card.time));
  const ev = emit(m.type === 'attention.timeout' ? { ...m, data: { ...m.data, after_ms: latency } } : m, { cause: card.id, subject: card.id });
  if (m.type === 'attention.answered') {
    emit({ type: 'attention.resolved', data: { resolution: 'answered', latency_ms: latency } }, { cause: ev.id, subject: card.id });
  }
}

/**
 * An approval outcome's card: same key, the call id breaking ties. An exact
 * call id match wins; an outcome naming a call id never takes a card raised
 * for a DIFFERENT call; otherwise the oldest candidate.
 */
function findApproval(lane: SessionLane, key: string | undefined, callId: string | undefined): PendingCard | undefined {
  if (key === undefined) return undefined;
  const candidates = lane.approvals.filter((c) => c.key === key);
  return callId ? (candidates.find((c) => c.toolCallId === callId) ?? candidates.find((c) => c.toolCallId === undefined)) : candidates[0];
}

/** An attention terminal whose request is unknown, as `x.hermes.attention.unpaired` (no free text). */
function unpairedCard(m: CardOutcomeEvent): MappedEvent {
  const resolution = m.type === 'attention.resolved' ? m.data.resolution : undefined;
  const option = m.type === 'attention.answered' ? m.data.answer.option : undefined;
  const data = { of: m.type, ...(resolution !== undefined ? { resolution } : {}), ...(option !== undefined ? { option } : {}) };
  return { type: X_HERMES.attentionUnpaired, data, ...(m.subject ? { subject: m.subject } : {}) };
}

/** The full envelope of one event (AEP-0001 §5), at `seq`. */
export function stamp(
  m: KeyedEvent,
  keys: HookKeys,
  lane: SessionLane,
  ctx: Pick<DecideContext, 'epoch' | 'host' | 'policy' | 'newId' | 'now'>,
  seq: number,
  extra: Extra,
): AepEvent {
  const run = isSessionScoped(m.type) || keys.outsideRun ? undefined : 'run' in extra ? extra.run : (keys.run ?? keys.parentRun ?? lane.currentRun);
  const subject = extra.subject ?? m.subject;
  const capture = levelFor(ctx.policy, m.type);
  // built from one mapped event, so its type and data belong together (TypeScript cannot follow that through the union)
  return {
    aep: '0.1',
    id: ctx.newId(),
    type: m.type,
    time: ctx.now.toISOString(),
    source: `aep://${ctx.host}/agent/hermes/session/${encodeURIComponent(lane.session)}`,
    agent: 'hermes',
    session: lane.session,
    ...(run !== undefined ? { run } : {}),
    seq,
    epoch: ctx.epoch,
    ...(extra.cause !== undefined ? { cause: extra.cause } : {}),
    ...(subject !== undefined ? { subject } : {}),
    severity: severityOf(m.type),
    capture,
    // vendor facts are metadata: not at `none`
    ...(capture === 'none' ? {} : m.ext),
    // `none` is envelope only (AEP-0001 §8.2): not even structural payload
    data: capture === 'none' ? {} : m.data,
  } as AepEvent;
}
