import { extraOf, type HookEnvelope } from '../hermes/envelope.js';
import type { CapturePolicy } from '../capture/policy.js';
import { compact, digestOf, gatedText } from './content.js';
import type { MappedEvent } from './types.js';

/** `pre_llm_call` opens the run (one Hermes turn); the user message is content. */
export function mapPreLlmCall(env: HookEnvelope, policy: CapturePolicy): MappedEvent[] {
  const type = 'run.started';
  const message = extraOf(env).user_message;
  const data = compact({
    trigger: 'user' as const,
    message_digest: digestOf(policy, type, message),
    prompt: gatedText(policy, type, message),
  });
  return [{ type, data }];
}

/**
 * `on_session_end` fires at the end of EVERY turn (the name says session, the
 * source says turn), so it closes the RUN: completed → finished, interrupted →
 * cancelled by the user, neither → failed (the turn stopped without finishing).
 */
export function mapTurnEnd(env: HookEnvelope, _policy: CapturePolicy): MappedEvent[] {
  const x = extraOf(env);
  if (x.interrupted === true) return [{ type: 'run.cancelled', data: { by: 'user' } }];
  if (x.completed === false) return [{ type: 'run.failed', data: { reason: 'incomplete' } }];
  return [{ type: 'run.finished', data: {} }];
}
