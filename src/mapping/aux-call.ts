import { code, extraOf, str, type HookEnvelope } from '../hermes/envelope.js';
import type { CapturePolicy } from '../capture/policy.js';
import { X_HERMES } from '../aep/lifecycle.js';
import { fromHermesUsage } from '../usage/token-usage.js';
import { compact } from './content.js';
import { modelCallData } from './model-call.js';
import type { MappedEvent } from './types.js';

/**
 * Hermes's auxiliary model calls (title generation, compression, vision, the
 * smart-approval review, …): `agent/auxiliary_hooks.py` at hermes-agent
 * 7effdff8 fires `pre_auxiliary_call` before and `post_auxiliary_call` after
 * each provider attempt. Neither name is in `VALID_HOOKS` of any tag we could
 * place (0.21.3 included), so only a Python plugin on a build that fires them
 * receives them (an unknown name is stored with a warning there); shell hooks
 * and outbound webhooks refuse them.
 */
export const AUX_CALL_HOOKS: ReadonlySet<string> = new Set(['pre_auxiliary_call', 'post_auxiliary_call']);

/** Whether the aux hook ran outside any turn: Hermes sends `turn_id: ""` then, and its call belongs to no run. */
export const isAuxOutsideTurn = (env: HookEnvelope): boolean => AUX_CALL_HOOKS.has(env.hook_event_name) && str(extraOf(env).turn_id) === undefined;

/**
 * `post_auxiliary_call` → `x.hermes.model.call`, the same kind as a main-loop
 * call (so its tokens and cost count toward its turn and its span is a `chat`
 * span), told apart by `aux_task`. A call without readable `usage` (Hermes
 * sends None for a streamed aux call and for a failed one) is marked
 * `usage_unknown`: its tokens are unknown, never zero. A failed call carries
 * its error type (the message is content and stays out).
 */
export function mapPostAuxiliaryCall(env: HookEnvelope, policy: CapturePolicy): MappedEvent[] {
  const x = extraOf(env);
  const data = compact({
    ...modelCallData(x, policy),
    aux_task: code(x.aux_task) ?? code(x.task),
    error_type: code(x.error_type),
    usage_unknown: fromHermesUsage(x.usage) === undefined ? (true as const) : undefined,
  });
  return [{ type: X_HERMES.modelCall, data }];
}

/** `pre_auxiliary_call` → nothing: its post carries every fact it has and the call's real start and end. */
export function mapPreAuxiliaryCall(_env: HookEnvelope, _policy: CapturePolicy): MappedEvent[] {
  return [];
}
