import type { CapturePolicy } from '../capture/policy.js';
import { atLeast } from '../mapping/content.js';
import type { KeyedEvent } from '../aep/mapped.js';
import { GATE_OPTION_IDS, type GateOptionId } from '../aep/card-options.js';

/** The permission card's two options: allow releases the call into Hermes's own gates, deny blocks it. */
const GATE_LABELS: Readonly<Record<GateOptionId, string>> = { allow: 'Allow', deny: 'Deny' };
export const GATE_OPTIONS = GATE_OPTION_IDS.map((id) => ({ id, label: GATE_LABELS[id] }));
export type GateOption = GateOptionId;

/** Tool names are metadata, but a model can invent long ones: the prompt carries at most this much of it. */
const MAX_NAME = 128;

/**
 * The operator gate's answerable card for one held `pre_tool_call`
 * (`kind: "permission"`, answered only over control). Pure: the caller gives
 * the expiry. Its cause is the call's `tool.requested` (identity pairs it by
 * the hook's call id); `joins.gate` keeps identity from taking it for a form
 * card: the control target closes it.
 */
export function gateCard(toolName: string, policy: CapturePolicy, expiresAt: Date): KeyedEvent {
  const name = toolName.length > MAX_NAME ? `${toolName.slice(0, MAX_NAME)}…` : toolName;
  const labelled = atLeast(policy, 'attention.requested', 'redacted');
  return {
    type: 'attention.requested',
    data: {
      kind: 'permission',
      prompt: `${policy.agent} asks to run the tool ${name}`,
      options: GATE_OPTIONS.map((o) => ({ id: o.id, label: labelled ? o.label : o.id })),
      expires_at: expiresAt.toISOString(),
      respond_via: ['control'],
    },
    joins: { gate: true },
  };
}

/** Whether an event (own, read back from the history or live) is a gate card: answerable over control. */
export function isGateCard(ev: { readonly type: string; readonly data?: unknown }): boolean {
  if (ev.type !== 'attention.requested') return false;
  const via = (ev.data as { respond_via?: unknown } | undefined)?.respond_via;
  return Array.isArray(via) && via.includes('control');
}
