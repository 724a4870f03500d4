import type { Severity } from '../core/severity.js';

/**
 * The one AEP lifecycle table of this project: which unit families exist,
 * which type opens each unit, which close it (AEP-0002 §2), and which are
 * steps in between. Identity, the span builder and the span attributes read
 * it instead of spelling the type names themselves.
 */

/** The vendor-namespaced types this project emits (`schemas/x-hermes/`). */
export const X_HERMES = {
  /** a failed model call (`api_request_error`) */
  apiError: 'x.hermes.api.error',
  /** one finished model call (`post_api_request`): model, timing, finish reason, token usage, cost */
  modelCall: 'x.hermes.model.call',
  /** `on_session_reset`: names the successor session, never an end */
  sessionReset: 'x.hermes.session.reset',
  /** a smart approval's model review started (no person is asked) */
  approvalReviewRequested: 'x.hermes.approval.review.requested',
  /** an attention outcome whose request is unknown (AEP-0002 §7.1 needs its id) */
  attentionUnpaired: 'x.hermes.attention.unpaired',
  /** an operator's instruction handed to Hermes at a turn start (steering, AEP_INSTRUCT) */
  instructionDelivered: 'x.hermes.instruction.delivered',
  /** an accepted instruction never delivered: its session ended first */
  instructionDropped: 'x.hermes.instruction.dropped',
} as const;

export type XHermesType = (typeof X_HERMES)[keyof typeof X_HERMES];

/** The vendor namespace prefix; an unknown hook rides as `x.hermes.<name>` (mapping/fallback.ts). */
export const X_HERMES_PREFIX = 'x.hermes.';
export type XHermesFallbackType = `x.hermes.${string}`;

/** The unit families: each opening type starts a unit its terminal types close. */
export const FAMILIES = {
  session: { opening: ['session.started'], steps: [], terminal: ['session.ended'] },
  run: { opening: ['run.started'], steps: [], terminal: ['run.finished', 'run.cancelled', 'run.failed'] },
  tool: { opening: ['tool.requested'], steps: [], terminal: ['tool.completed', 'tool.failed', 'tool.denied'] },
  // `attention.answered` is a step: the emitter resolves right after it (AEP-0002 §7)
  card: { opening: ['attention.requested'], steps: ['attention.answered'], terminal: ['attention.resolved', 'attention.timeout'] },
  delegation: { opening: ['delegation.subagent.started'], steps: [], terminal: ['delegation.subagent.stopped'] },
} as const;

export type Family = keyof typeof FAMILIES;
type Members<F extends Family> = (typeof FAMILIES)[F]['opening' | 'steps' | 'terminal'][number];
export type LifecycleType = { [F in Family]: Members<F> }[Family];
export type OpeningType = (typeof FAMILIES)[Family]['opening'][number];
export type TerminalType = (typeof FAMILIES)[Family]['terminal'][number];

/** Core types this project emits outside any unit family. */
export const GUARDRAIL = 'assessment.guardrail.recorded';

/** The acknowledgements a control target emits, one per command (AEP-0004 §3). */
export const CONTROL_ACKS = ['control.accepted', 'control.rejected'] as const;
export type ControlAckType = (typeof CONTROL_ACKS)[number];
export const isControlAck = (type: string): type is ControlAckType => (CONTROL_ACKS as readonly string[]).includes(type);

/** Every AEP type this project emits. */
export type AepType = LifecycleType | typeof GUARDRAIL | ControlAckType | XHermesType | XHermesFallbackType;

/** The families whose units the span mirror draws (a session is a trace, not a span). */
export type UnitKind = Exclude<Family, 'session'>;

type Role = 'opening' | 'step' | 'terminal';
/** type → its family and its role in it */
const ROLES = new Map<string, { readonly family: Family; readonly role: Role }>();
for (const [family, f] of Object.entries(FAMILIES) as [Family, (typeof FAMILIES)[Family]][]) {
  const roles: [readonly string[], Role][] = [
    [f.opening, 'opening'],
    [f.steps, 'step'],
    [f.terminal, 'terminal'],
  ];
  for (const [types, role] of roles) for (const type of types) ROLES.set(type, { family, role });
}

/** The unit family a type belongs to, if any. */
export const familyOf = (type: string): Family | undefined => ROLES.get(type)?.family;
export const isOpening = (type: string): type is OpeningType => ROLES.get(type)?.role === 'opening';
export const isTerminal = (type: string): type is TerminalType => ROLES.get(type)?.role === 'terminal';

/** An event after its unit's opening: a step or a terminal of `family`. */
export const isOutcome = (type: string, family: Family): boolean => familyOf(type) === family && !isOpening(type);

/** A terminal of exactly `family` (the span mirror closes a unit of that kind on it). */
export const isTerminalOf = (type: string, family: Family): boolean => familyOf(type) === family && isTerminal(type);

/** The types after a unit's opening: its steps and terminals. */
export type OutcomeOf<F extends Family> = (typeof FAMILIES)[F]['steps' | 'terminal'][number];

/** `isOutcome` on an event (mapped or emitted): narrows it, and so its `data`. */
export const isOutcomeEvent = <E extends { readonly type: string }, F extends Family>(e: E, family: F): e is Extract<E, { readonly type: OutcomeOf<F> }> =>
  isOutcome(e.type, family);

/** Session-scoped types: they belong to no run (AEP-0002 §4). */
const SESSION_SCOPED: ReadonlySet<string> = new Set<string>([
  ...FAMILIES.session.opening,
  ...FAMILIES.session.terminal,
  X_HERMES.sessionReset,
  ...CONTROL_ACKS,
]);
export const isSessionScoped = (type: string): boolean => SESSION_SCOPED.has(type);

// a refusal the sender must see is not dropped first by a slow consumer's backpressure (AEP-0003 §8.4)
const SEVERITY: Readonly<Record<string, Severity>> = {
  [X_HERMES.apiError]: 'error',
  'run.failed': 'error',
  'control.rejected': 'notice',
  [X_HERMES.instructionDropped]: 'notice',
};
/** The severity an event of `type` carries. */
export const severityOf = (type: string): Severity => SEVERITY[type] ?? 'info';
