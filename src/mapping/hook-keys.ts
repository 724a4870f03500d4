import { extraOf, str, type HookEnvelope } from '../hermes/envelope.js';
import type { HookKeys } from '../aep/mapped.js';
import { CLARIFY_TOOL } from './clarify.js';
import { compact } from './content.js';
import { sessionName } from './session-name.js';
import { isAuxOutsideTurn } from './aux-call.js';

/** The hooks around Hermes's own approval prompt: their payloads carry `session_id: ""` and a `session_key`. */
const APPROVAL_HOOKS: ReadonlySet<string> = new Set(['pre_approval_request', 'post_approval_response']);

/**
 * The AEP-level keys identity places and pairs a hook's events by, read off
 * the Hermes envelope: the session (an approval joins its `session_key` when
 * that session is known), the turn (the run; a subagent hook names its
 * parent's), the tool call, the approval join key (`session_key|pattern_key`),
 * and whether a `clarify` call may raise a form card.
 */
export function hookKeys(env: HookEnvelope): HookKeys {
  const x = extraOf(env);
  const approval = APPROVAL_HOOKS.has(env.hook_event_name);
  // a session key names a session id: reserved names are escaped alike, so the join finds the session
  const sessionKey = sessionName(str(x.session_key));
  return compact({
    session: sessionName(str(env.session_id)),
    joinSession: approval ? sessionKey : undefined,
    run: str(x.turn_id),
    outsideRun: isAuxOutsideTurn(env) ? true : undefined,
    rotatedFrom: approval ? undefined : sessionName(rotatedFrom(str(env.session_id), str(x.turn_id))),
    parentRun: str(x.parent_turn_id),
    callId: str(x.tool_call_id),
    approval: approval ? { key: approvalKey(sessionKey, str(x.pattern_key)) } : undefined,
    formCall: env.tool_name === CLARIFY_TOOL ? true : undefined,
  });
}

/**
 * The session a turn began in, read off its `turn_id` (`{session_id}:{task_id}:{uuid8}`, minted at the turn's start:
 * agent/turn_finalizer.py per the design record), when it is not `session`: Hermes rotated the session id inside the
 * turn (context compression mints a child session; research note §6). An inference from the id's shape: a turn id not
 * of that shape, or one that starts with the hook's own session, says nothing.
 */
export function rotatedFrom(session: string | undefined, turn: string | undefined): string | undefined {
  if (session === undefined || turn === undefined || turn.startsWith(`${session}:`)) return undefined;
  const parts = turn.split(':');
  if (parts.length < 3) return undefined;
  const began = parts.slice(0, -2).join(':');
  return began.length > 0 && began !== session ? began : undefined;
}

/** An approval's join key: a post pairs with the pre of the same session key and pattern. */
export const approvalKey = (sessionKey: string | undefined, pattern: string | undefined): string => `${sessionKey ?? ''}|${pattern ?? ''}`;
