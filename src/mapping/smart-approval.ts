import { code, extraOf, str, type HookEnvelope } from '../hermes/envelope.js';
import type { CapturePolicy } from '../capture/policy.js';
import { compact } from './content.js';
import type { MappedEvent } from './types.js';
import { GUARDRAIL, X_HERMES } from '../aep/lifecycle.js';

/**
 * Hermes 0.19.0's smart approvals (`approvals.mode: smart`, its new default):
 * before any person is asked, an auxiliary model reviews a flagged command,
 * and the approval hooks fire with `surface: "smart"` around that review.
 * No person sees it, so it is not an attention card. The verdict is recorded
 * as an automated guardrail assessment of the tool call (AEP-0009 §6). When the
 * model says ESCALATE, Hermes fires no `post_approval_response`; the human card
 * that follows (surface `cli`/`gateway`) records the person's decision.
 */
export const SMART_SURFACE = 'smart';

/** Categories carried at most (Hermes flags a command under one key per matched detector). */
const MAX_CATEGORIES = 16;

export function isSmartApproval(env: HookEnvelope): boolean {
  return extraOf(env).surface === SMART_SURFACE;
}

/** `pre_approval_request {surface: smart}` → the review started (no content: the command is on the tool call). */
export function mapSmartReviewRequest(_env: HookEnvelope, _policy: CapturePolicy): MappedEvent[] {
  return [{ type: X_HERMES.approvalReviewRequested, data: {} }];
}

/**
 * `post_approval_response {surface: smart}` → the guardrail verdict.
 * `smart_approve` is `allowed`; `smart_deny` is `flagged`, not `blocked`: in
 * the CLI and gateway terminal path the owner is then asked and may run the
 * command once anyway (that answer is on the human card that follows).
 */
export function mapSmartReviewResponse(env: HookEnvelope, _policy: CapturePolicy): MappedEvent[] {
  const x = extraOf(env);
  const choice = code(x.choice);
  const verdict = choice === 'smart_approve' ? ('allowed' as const) : choice === 'smart_deny' ? ('flagged' as const) : undefined;
  const keys = Array.isArray(x.pattern_keys) ? x.pattern_keys : [x.pattern_key];
  const categories = [...new Set(keys.map(str).filter((k): k is string => k !== undefined))].slice(0, MAX_CATEGORIES).map((name) => ({ name }));
  const guardrail = compact({
    stage: 'input' as const,
    verdict,
    categories: categories.length > 0 ? categories : undefined,
    detector: { name: code(x.decided_by) ?? 'aux_llm' },
  });
  return [{ type: GUARDRAIL, data: { guardrail } }];
}
