import { UNKNOWN_SESSION, isType, type AepEvent } from '../aep/event.js';
import type { Joins } from '../aep/mapped.js';
import { CLARIFY_TOOL } from './clarify.js';
import { approvalKey } from './hook-keys.js';

/**
 * The joins of an event read back from the history: what `hookKeys` read off
 * its hook, as far as the event carries it. A tool event names its call; a
 * clarify form card's subject is its call; an approval card's lane is the
 * session its `session_key` named (Hermes approvals join a session only by
 * that key), so its join key is rebuilt from the lane and the pattern
 * (its subject). On the `unknown` lane the session key is not in the event:
 * such a card gets no key, and nothing pairs with it after a restart (its
 * outcome rides as unpaired, as it did before). At capture `none` the payload
 * is absent, and with it what only the payload carried.
 */
export function historyJoins(ev: AepEvent): Joins {
  if (isType(ev, 'tool.requested', 'tool.completed', 'tool.failed', 'tool.denied')) {
    // read back from a file: typed as written, checked as found
    const callId = typeof ev.data.tool?.call_id === 'string' && ev.data.tool.call_id.length > 0 ? ev.data.tool.call_id : undefined;
    const formCall = ev.type === 'tool.requested' && ev.data.tool?.name === CLARIFY_TOOL;
    return { ...(callId !== undefined ? { callId } : {}), ...(formCall ? { formCall } : {}) };
  }
  if (isType(ev, 'attention.requested')) {
    if (ev.data.kind === 'permission') return { approval: ev.session === UNKNOWN_SESSION ? {} : { key: approvalKey(ev.session, ev.subject) } };
    if (ev.data.kind === 'form' && ev.subject) return { callId: ev.subject };
  }
  return {};
}
