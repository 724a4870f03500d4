import type { AepEvent } from '../aep/event.js';
import type { ControlItem } from '../identity/identity-stage.js';
import type { WireEvent } from '../aep/wire.js';

/** The control gates' settings (DaemonConfig `control`). */
export interface ControlSettings {
  /** AEP_HERMES_CONTROL */
  readonly gate: boolean;
  /** AEP_HERMES_GATE_TOOLS, anchored */
  readonly gateTools: RegExp;
  /** AEP_ATTENTION_TIMEOUT_MS */
  readonly holdMs: number;
  /** AEP_INSTRUCT */
  readonly instruct: boolean;
}

/** What a Hermes hook is answered: `{}`, the vendor's block, or the one context Hermes consumes. */
export type HookReply = Readonly<Record<string, never>> | { readonly action: 'block'; readonly message: string } | { readonly context: string };
export const EMPTY_REPLY: HookReply = Object.freeze({});

/**
 * Events the target emits into an own session: stamped at once (`events`, in
 * order), durable once `written` settles (true: the history holds them).
 * `refused`: the history cannot take writes now, nothing was stamped.
 */
export type Emitted = { readonly events: readonly AepEvent[]; readonly written: Promise<boolean> } | { readonly refused: string };

export interface ControlEmitter {
  /** why nothing can be written now (the history failing), checked before a command is decided */
  refusal(): string | undefined;
  /**
   * Stamp `items` into `session` and write them; a `command` given is written
   * first, as received (seq-less, never stamped), so the session's history
   * holds who commanded what before the answer.
   */
  emit(session: string, items: readonly ControlItem[], command?: WireEvent): Emitted;
  /** publish an already-written event again (a recorded ack, AEP-0004 §3): to the stream and the relay, not the history */
  republish(w: WireEvent): void;
  /**
   * Stamp `items` into `session` (their seqs taken) and publish them to the
   * stream and the relay only, never the history: a flood's `busy` nacks.
   * Empty when they could not be stamped.
   */
  announce(session: string, items: readonly ControlItem[]): readonly AepEvent[];
}
