import type { AepEvent } from '../aep/event.js';
import { X_HERMES, isOutcome, isTerminalOf } from '../aep/lifecycle.js';
import { addCall } from './run-usage.js';
import type { Joins } from '../aep/mapped.js';
import { MAX_ENDED_RUNS_PER_SESSION, MAX_PENDING_PER_SESSION, boundedAdd, boundedSet, type SessionLane } from './lanes.js';

/**
 * The pairing reducer: the lane after `ev` is a function of the lane before
 * it, the event and its joins alone (no clock, no I/O, no counters, no other
 * lane). Live processing decides an event, then applies it; a restart applies
 * the events read back from the history, so both build the same state. It
 * updates the lane in place (copying bounded maps per event would cost the
 * hook path), and returns how many pending entries it evicted for space.
 * `seq` is not its business: it belongs to the live epoch.
 */
export function apply(lane: SessionLane, ev: AepEvent, joins: Joins): number {
  switch (ev.type) {
    case 'session.started':
      lane.startedId ??= ev.id;
      return 0;
    case 'session.ended':
      // its emitter closed every card before it (AEP-0002 §7.2); none stays pending
      lane.ended = true;
      lane.approvals.length = 0;
      lane.clarify.clear();
      return 0;
    case 'run.started':
      if (!ev.run) return 0;
      lane.currentRun = ev.run;
      return evicted(boundedSet(lane.openRuns, ev.run, ev.id, MAX_PENDING_PER_SESSION));
    case 'tool.requested':
      return requestTool(lane, ev, joins);
    case 'attention.requested':
      return raiseCard(lane, ev, joins);
    case 'delegation.subagent.started':
      return ev.subject ? evicted(boundedSet(lane.delegations, ev.subject, ev.id, MAX_PENDING_PER_SESSION)) : 0;
    case 'delegation.subagent.stopped':
      if (ev.subject) lane.delegations.delete(ev.subject);
      return 0;
    case X_HERMES.modelCall:
      // summed for the run's terminal; a call in no open run (its start unknown) still counts toward that run
      return ev.run && !lane.endedRuns.has(ev.run) ? evicted(boundedSet(lane.usage, ev.run, addCall(lane.usage.get(ev.run), ev), MAX_PENDING_PER_SESSION)) : 0;
    default:
      break;
  }
  if (isTerminalOf(ev.type, 'run') && ev.run) {
    lane.openRuns.delete(ev.run);
    lane.usage.delete(ev.run);
    boundedAdd(lane.endedRuns, ev.run, MAX_ENDED_RUNS_PER_SESSION);
    if (lane.currentRun === ev.run) lane.currentRun = [...lane.openRuns.keys()].pop();
  } else if (isTerminalOf(ev.type, 'tool') && joins.callId) {
    lane.tools.delete(joins.callId);
    lane.noCard.delete(joins.callId);
    boundedAdd(lane.endedTools, joins.callId, MAX_ENDED_RUNS_PER_SESSION);
  } else if (isOutcome(ev.type, 'card') && ev.subject) {
    // an outcome names its card by the card's id (AEP-0002 §7.1)
    const i = lane.approvals.findIndex((c) => c.id === ev.subject);
    if (i >= 0) lane.approvals.splice(i, 1);
    for (const [k, c] of lane.clarify) if (c.id === ev.subject) lane.clarify.delete(k);
  }
  return 0;
}

const evicted = (did: boolean): number => (did ? 1 : 0);

function requestTool(lane: SessionLane, ev: AepEvent, joins: Joins): number {
  const callId = joins.callId;
  if (!callId) return 0;
  // a call id can be reused (an emitter may derive ids): a new request is a new call
  lane.endedTools.delete(callId);
  // a form card, if one is raised, follows in the same hook and clears the mark
  if (joins.formCall) boundedAdd(lane.noCard, callId, MAX_PENDING_PER_SESSION);
  return evicted(boundedSet(lane.tools, callId, ev.id, MAX_PENDING_PER_SESSION));
}

function raiseCard(lane: SessionLane, ev: AepEvent, joins: Joins): number {
  const t = Date.parse(ev.time);
  if (joins.approval) {
    const key = joins.approval.key;
    if (key === undefined) return 0;
    // raised inside a tool call: the call it names, or the one its cause is the request of
    const toolCallId = joins.callId ?? callOfRequest(lane, ev.cause);
    lane.approvals.push({ id: ev.id, time: t, key, ...(toolCallId !== undefined ? { toolCallId } : {}), ...(ev.run !== undefined ? { run: ev.run } : {}) });
    if (lane.approvals.length <= MAX_PENDING_PER_SESSION) return 0;
    lane.approvals.shift();
    return 1;
  }
  const callId = joins.callId;
  // the operator gate's card: its control target resolves it, and it is no form card of the call
  if (!callId || joins.gate) return 0;
  lane.noCard.delete(callId);
  const card = { id: ev.id, time: t, key: callId, ...(ev.run !== undefined ? { run: ev.run } : {}) };
  return evicted(boundedSet(lane.clarify, callId, card, MAX_PENDING_PER_SESSION));
}

/** The call whose `tool.requested` has the id `cause`, if that call is pending in the lane. */
function callOfRequest(lane: SessionLane, cause: string | undefined): string | undefined {
  if (cause === undefined) return undefined;
  for (const [callId, id] of lane.tools) if (id === cause) return callId;
  return undefined;
}
