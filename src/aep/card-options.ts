/**
 * The option ids of the permission cards (`attention.requested`, kind
 * `permission`) this daemon emits, as vocabulary: the producers (mapping/,
 * control/) label them, the metrics bound `aep.card.choice` to them.
 */

/** Hermes's approval menu: exactly the choice set `post_approval_response` can deliver (labels in mapping/approval.ts). */
export const APPROVAL_OPTION_IDS = ['once', 'session', 'always', 'deny'] as const;
export type ApprovalOptionId = (typeof APPROVAL_OPTION_IDS)[number];

/** The control gate's card: allow releases the call into Hermes's own gates, deny blocks it (labels in control/gate-card.ts). */
export const GATE_OPTION_IDS = ['allow', 'deny'] as const;
export type GateOptionId = (typeof GATE_OPTION_IDS)[number];
