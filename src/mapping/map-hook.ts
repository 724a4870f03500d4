import type { HookEnvelope } from '../hermes/envelope.js';
import type { CapturePolicy } from '../capture/policy.js';
import { mapApiRequestError } from './api.js';
import { mapPostApiRequest } from './model-call.js';
import { mapPostAuxiliaryCall, mapPreAuxiliaryCall } from './aux-call.js';
import { mapApprovalRequest, mapApprovalResponse } from './approval.js';
import { CLARIFY_TOOL, mapClarifyOutcome, mapClarifyRequest } from './clarify.js';
import { mapSubagentStart, mapSubagentStop } from './delegation.js';
import { mapUnknownHook } from './fallback.js';
import { mapPreLlmCall, mapTurnEnd } from './run.js';
import { mapSessionFinalize, mapSessionReset, mapSessionStart } from './session.js';
import { isSmartApproval, mapSmartReviewRequest, mapSmartReviewResponse } from './smart-approval.js';
import { mapPostToolCall, mapPreToolCall, toolOutcome } from './tool.js';
import type { HookMapper, MappedEvent } from './types.js';
import type { KeyedEvent, MappedHook } from '../aep/mapped.js';
import { hermesExtensions } from './extensions.js';
import { hookKeys } from './hook-keys.js';
import { hookFacts } from './hook-facts.js';
import { withSafeIdentifiers } from './safe-identifiers.js';

const preTool: HookMapper = (env, policy) => [...mapPreToolCall(env, policy), ...(env.tool_name === CLARIFY_TOOL ? mapClarifyRequest(env, policy) : [])];

const postTool: HookMapper = (env, policy) => [
  ...mapPostToolCall(env, policy),
  ...(env.tool_name === CLARIFY_TOOL ? mapClarifyOutcome(env, policy, toolOutcome(env)) : []),
];

// an approval hook with `surface: smart` (Hermes 0.19.0) is a model's review, not a person's card
const preApproval: HookMapper = (env, policy) => (isSmartApproval(env) ? mapSmartReviewRequest : mapApprovalRequest)(env, policy);
const postApproval: HookMapper = (env, policy) => (isSmartApproval(env) ? mapSmartReviewResponse : mapApprovalResponse)(env, policy);

/** A hook whose moment feeds a daemon step (hook-facts.ts), not the history: no event of its own. */
const noEvent: HookMapper = () => [];

/** The hook table: one row per mapped Hermes hook. */
const MAPPERS: Readonly<Record<string, HookMapper>> = {
  pre_tool_call: preTool,
  post_tool_call: postTool,
  pre_llm_call: mapPreLlmCall,
  on_session_start: mapSessionStart,
  on_session_end: mapTurnEnd,
  on_session_finalize: mapSessionFinalize,
  on_session_reset: mapSessionReset,
  subagent_start: mapSubagentStart,
  subagent_stop: mapSubagentStop,
  pre_approval_request: preApproval,
  post_approval_response: postApproval,
  api_request_error: mapApiRequestError,
  post_api_request: mapPostApiRequest,
  pre_auxiliary_call: mapPreAuxiliaryCall,
  post_auxiliary_call: mapPostAuxiliaryCall,
  // timed into the model call's first_token_ms (usage/first-token-step.ts); a delta per chunk never reaches the history
  on_stream_start: noEvent,
  on_stream_delta: noEvent,
  on_stream_end: noEvent,
};

/** The Hermes hook names the mapping knows by name (the rest map through the fallback). */
export const MAPPED_HOOKS: readonly string[] = Object.keys(MAPPERS);

function mapSafe(safe: HookEnvelope, policy: CapturePolicy): MappedEvent[] {
  const mapper = Object.hasOwn(MAPPERS, safe.hook_event_name) ? MAPPERS[safe.hook_event_name] : undefined;
  return (mapper ?? mapUnknownHook)(safe, policy);
}

/**
 * The pure mapping: one Hermes hook envelope → the AEP events it means, at the
 * given capture policy. No I/O, no clock, no identity: the daemon stamps those.
 * Identifier-shaped values go through secret detection first (safe-identifiers.ts).
 */
export function mapHook(env: HookEnvelope, policy: CapturePolicy): MappedEvent[] {
  return mapSafe(withSafeIdentifiers(env, policy.redact), policy);
}

/**
 * One hook as identity takes it: its AEP-level keys, and its events with the
 * extension attributes their envelope carries; all three built from the
 * envelope with its identifiers through secret detection, once. Its facts
 * (what the pricer, the drift watch and the control step need) are read off
 * the envelope as it came (hook-facts.ts).
 */
export function readHook(env: HookEnvelope, policy: CapturePolicy): MappedHook {
  const safe = withSafeIdentifiers(env, policy.redact);
  const keys = hookKeys(safe);
  const events = mapSafe(safe, policy).map((m): KeyedEvent => {
    const ext = hermesExtensions(safe, m.type);
    return ext ? { ...m, ext } : m;
  });
  // a session rotated inside its turn opens with its lineage: the session and turn it came from (AEP-0002 session.started parent)
  const opening: KeyedEvent[] =
    keys.rotatedFrom !== undefined && keys.run !== undefined
      ? [{ type: 'session.started', data: { client: { name: 'hermes' }, parent: { session: keys.rotatedFrom, run: keys.run } } }]
      : [];
  return { keys, events: [...opening, ...events], facts: hookFacts(env) };
}
