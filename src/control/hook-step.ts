import type { KeyedEvent, MappedHook } from '../aep/mapped.js';
import type { CapturePolicy } from '../capture/policy.js';
import type { ControlTarget } from './control-target.js';
import type { ControlSettings } from './control-types.js';
import { gateCard } from './gate-card.js';
import type { HoldSlot } from './hold-slots.js';

/** Request headers a hook transport sends to say what it will do with a reply (the shim, the plugin). */
export const HOLD_HEADER = 'x-hermes-aep-hold-ms';
export const STEER_HEADER = 'x-hermes-aep-steer';
/** The daemon answers this long before the transport's own deadline (the transport waits N, the hold ends at N − margin). */
export const HOLD_MARGIN_MS = 2_000;
/** A hold shorter than this is not worth raising a card for: the call proceeds unheld. */
export const MIN_HOLD_MS = 1_000;

/** What the transport of one LIVE hook declared (absent for a spooled hook: Hermes was answered long ago). */
export interface LiveHook {
  /** it waits this many ms in all for a held reply (only sent with its AEP_HERMES_CONTROL on, on pre_tool_call) */
  readonly holdMs?: number;
  /** it passes a pre_llm_call reply to Hermes (its AEP_INSTRUCT on) */
  readonly steer?: boolean;
}

/** How the hook's reply is made once its events are written. */
export type ReplyPlan = { readonly kind: 'hold'; readonly holdMs: number; readonly slot: HoldSlot } | { readonly kind: 'context'; readonly context: string };

export interface StepResult {
  readonly mapped: MappedHook;
  readonly plan?: ReplyPlan;
}

/** Read the transport's declarations off the request headers; a malformed value declares nothing. */
export function liveHookOf(headers: Readonly<Record<string, string | string[] | undefined>>): LiveHook {
  const hold = headers[HOLD_HEADER];
  const steer = headers[STEER_HEADER];
  const holdMs = typeof hold === 'string' && /^\d{1,9}$/.test(hold) ? Number(hold) : undefined;
  return { ...(holdMs !== undefined ? { holdMs } : {}), ...(steer === '1' ? { steer: true } : {}) };
}

/**
 * The control step between the pure mapping and identity (gates on only):
 * a gated tool call about to run (`facts.mayHold`) gains its permission card right after its
 * `tool.requested` (before any form card: the answerable gate first); a turn
 * start whose reply may steer (`facts.maySteer`) takes the session's queued instructions (their `delivered` audits
 * after `run.started`); a session end drops what is still queued (audited
 * before `session.ended`). Adds events only; the mapping's never move.
 */
export function controlStep(
  target: ControlTarget,
  settings: ControlSettings,
  policy: CapturePolicy,
  mapped: MappedHook,
  now: Date,
  live: LiveHook | undefined,
): StepResult {
  const session = mapped.keys.session;
  const events = mapped.events;
  const facts = mapped.facts;
  if (facts.mayHold && live?.holdMs !== undefined && target.gates(facts.toolName())) {
    const holdMs = Math.min(settings.holdMs, live.holdMs - HOLD_MARGIN_MS);
    const at = events.findIndex((e) => e.type === 'tool.requested');
    if (holdMs >= MIN_HOLD_MS && at >= 0) {
      // the name as the mapping carries it (identifiers through secret detection), never the raw envelope's
      const requested = events[at]!;
      const name = requested.type === 'tool.requested' ? requested.data.tool.name : '';
      const card = gateCard(name, policy, new Date(now.getTime() + holdMs));
      // the cap's slot is taken here, in the same turn as the check: calls mapped while others' cards are written cannot all pass
      const slot = target.reserveHold();
      if (!slot) return { mapped };
      return { mapped: { ...mapped, events: [...events.slice(0, at + 1), card, ...events.slice(at + 1)] }, plan: { kind: 'hold', holdMs, slot } };
    }
    return { mapped };
  }
  if (facts.maySteer && live?.steer && settings.instruct && session !== undefined) {
    const d = target.deliver(session);
    if (!d) return { mapped };
    const audits = d.events.map((e, i): KeyedEvent => ({ ...e, cause: d.causes[i]! }));
    return { mapped: { ...mapped, events: [...events, ...audits] }, plan: { kind: 'context', context: d.context } };
  }
  const end = events.findIndex((e) => e.type === 'session.ended');
  if (end >= 0 && session !== undefined && target.queue.has(session)) {
    const d = target.drop(session);
    if (!d) return { mapped };
    const audits = d.events.map((e, i): KeyedEvent => ({ ...e, cause: d.causes[i]! }));
    return { mapped: { ...mapped, events: [...events.slice(0, end), ...audits, ...events.slice(end)] } };
  }
  return { mapped };
}
