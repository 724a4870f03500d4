import { code, extraOf, str, type HookEnvelope } from '../hermes/envelope.js';
import type { CapturePolicy } from '../capture/policy.js';
import { atLeast, compact, gatedText } from './content.js';
import type { MappedEvent } from './types.js';
import { APPROVAL_OPTION_IDS, type ApprovalOptionId } from '../aep/card-options.js';

const CARD = 'attention.requested';

/**
 * The vendor's decision menu, carried as data: exactly the choice set
 * `post_approval_response` can deliver, with the vendor's own labels.
 */
const APPROVAL_LABELS: Readonly<Record<ApprovalOptionId, string>> = {
  once: 'Allow once',
  session: 'Allow for this session',
  always: 'Add to permanent allowlist',
  deny: 'Deny',
};
export const APPROVAL_OPTIONS = APPROVAL_OPTION_IDS.map((id) => ({ id, label: APPROVAL_LABELS[id] }));

function subjectOf(env: HookEnvelope): string | undefined {
  return str(extraOf(env).pattern_key);
}

/** `pre_approval_request` → the observed, read-only permission card (`respond_via: ["oob"]`). */
export function mapApprovalRequest(env: HookEnvelope, policy: CapturePolicy): MappedEvent[] {
  const x = extraOf(env);
  const subject = subjectOf(env);
  const command = gatedText(policy, CARD, x.command);
  // At metadata the prompt is synthesized from structure alone (AEP-0003 §9.2),
  // and option labels degrade to their ids.
  const prompt = command !== undefined ? `Approval requested: ${command}` : `${policy.agent} requests permission: ${subject ?? 'a command'}`;
  const labelled = atLeast(policy, CARD, 'redacted');
  const options = APPROVAL_OPTIONS.map((o) => ({ id: o.id, label: labelled ? o.label : o.id }));
  return [compact({ type: CARD, data: { kind: 'permission', prompt, options, respond_via: ['oob'] }, subject })];
}

/** `post_approval_response` → the human's choice (via `oob`), or the vendor's timeout. */
export function mapApprovalResponse(env: HookEnvelope, _policy: CapturePolicy): MappedEvent[] {
  const choice = code(extraOf(env).choice);
  const subject = subjectOf(env);
  if (choice === 'timeout') return [compact({ type: 'attention.timeout', data: {}, subject })];
  if (!choice) return [compact({ type: 'attention.resolved', data: { resolution: 'dismissed' }, subject })];
  return [compact({ type: 'attention.answered', data: { answer: { option: choice }, via: 'oob' }, subject })];
}
