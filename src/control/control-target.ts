import { LRUCache } from 'lru-cache';
import type { AepEvent } from '../aep/event.js';
import type { NackReason } from '../aep/payloads.js';
import type { CapturePolicy } from '../capture/policy.js';
import { atLeast, gatedText } from '../mapping/content.js';
import type { Logger } from '../core/logger.js';
import type { ControlItem } from '../identity/identity-stage.js';
import { wireFromOwn, wireOf, type WireEvent } from '../aep/wire.js';
import { needsDownlevel } from '../stream/ceiling.js';
import { downlevel } from '../capture/downlevel.js';
import type { CaptureEvent } from '../capture/types.js';
import { levelFor } from '../capture/policy.js';
import { AckLedger } from './ack-ledger.js';
import { EMPTY_REPLY, type ControlEmitter, type ControlSettings, type HookReply } from './control-types.js';
import { readGateAnswer, type GateDecision } from './gate-answer.js';
import { isGateCard } from './gate-card.js';
import { InstructionQueue, type Instruction } from './instruction-queue.js';
import { HoldSlots, type HoldSlot } from './hold-slots.js';
import { CommandBudget } from './command-budget.js';

export const RESPOND = 'control.attention.respond';
export const INSTRUCT = 'x.hermes.control.instruct';
/** The message Hermes shows the model for a deny that states no reason. */
export const DEFAULT_DENY_MESSAGE = 'Blocked by the operator (hermes-aep control gate).';
/** Closed gate cards remembered, so a late answer is refused rather than called unknown. */
const MAX_CLOSED_CARDS = 10_000;
/** Gate cards held at once (slots reserved at the check); past it a new call is not held (it proceeds at once, counted `not_held_full`). */
export const MAX_HELD = 1_000;

const NOT_ADOPTED = new Set(['control.cancel', 'control.pause', 'control.resume']);

/** Before the pipeline exists nothing can be decided: a command then is answered later, by the sender's retry. */
const NOT_ATTACHED: ControlEmitter = {
  refusal: () => 'starting',
  emit: () => ({ refused: 'starting' }),
  republish: () => undefined,
  announce: () => [],
};

/** One held `pre_tool_call`: its card, and how its hook is answered. */
interface Held {
  readonly card: AepEvent;
  readonly session: string;
  readonly run: string | undefined;
  readonly raisedAt: number;
  readonly timer: NodeJS.Timeout;
  readonly release: (reply: HookReply) => void;
  /** its place under the hold cap, given back when the card resolves */
  readonly slot: HoldSlot;
}

export interface ControlTargetOptions {
  readonly settings: ControlSettings;
  readonly policy: CapturePolicy;
  /** where its events go; the daemon attaches the hook pipeline once it exists (`attach`) */
  readonly emitter?: ControlEmitter;
  readonly clock?: () => number;
  readonly log: Logger;
  /** the hold cap (MAX_HELD unless a test sets a smaller one) */
  readonly maxHeld?: number;
}

/**
 * This daemon as a control-capable target for its own sessions (AEP-0004
 * §7): one ack decision per command deduped on `(source, id)` and re-emitted
 * byte for byte on redelivery; `control.attention.respond` releases a held
 * gate card; `x.hermes.control.instruct` queues steering for the session's
 * next turn start. Every decision is an ordinary sequenced event of the
 * session, `cause` = the command id. Observe-only unless a gate is on: then
 * `accepts` is empty and every command is nacked `unsupported`.
 */
export class ControlTarget {
  readonly queue = new InstructionQueue();
  private readonly ledger = new AckLedger();
  private readonly held = new Map<string, Held>();
  private readonly slots: HoldSlots;
  private readonly budget = new CommandBudget();
  private readonly closed = new LRUCache<string, true>({ max: MAX_CLOSED_CARDS });
  /** restore only: gate cards of earlier epochs whose outcome the history does not hold (yet) */
  private readonly orphans = new Map<string, { session: string; run: string | undefined; epoch: number }>();
  private readonly clock: () => number;
  private emitter: ControlEmitter = NOT_ATTACHED;
  readonly counts = {
    commands: 0,
    redelivered: 0,
    accepted: 0,
    rejected: 0,
    refused_by_history: 0,
    /** commands past the flood budget (command-budget.ts): nacked `busy` on the stream, nothing written */
    commands_busy: 0,
    held: 0,
    not_held_full: 0,
    answered: 0,
    expired: 0,
    dismissed: 0,
    delivered: 0,
    dropped: 0,
  };

  constructor(private readonly o: ControlTargetOptions) {
    this.clock = o.clock ?? Date.now;
    this.slots = new HoldSlots(o.maxHeld ?? MAX_HELD);
    if (o.emitter) this.emitter = o.emitter;
  }

  /** the events' way out (the hook pipeline: identity, the bus, the stream), once the daemon has built it */
  attach(emitter: ControlEmitter): void {
    this.emitter = emitter;
  }

  /** what this target's hello declares (`control.accepts`): exactly what the enabled gates accept */
  accepts(): string[] {
    return [...(this.o.settings.gate ? [RESPOND] : []), ...(this.o.settings.instruct ? [INSTRUCT] : [])];
  }

  get on(): boolean {
    return this.o.settings.gate || this.o.settings.instruct;
  }

  /** whether a tool call is one the gate holds (the gate on, the name matching AEP_HERMES_GATE_TOOLS) */
  gates(toolName: string | undefined): boolean {
    return this.o.settings.gate && toolName !== undefined && this.o.settings.gateTools.test(toolName);
  }

  /**
   * A slot under the hold cap for one call about to be held, taken now (its
   * card is raised and written before it is held): undefined when the cap is
   * reached, counted `not_held_full`, and the call proceeds unheld.
   */
  reserveHold(): HoldSlot | undefined {
    const slot = this.slots.reserve();
    if (!slot) this.counts.not_held_full++;
    return slot;
  }

  /**
   * Hold one gate card until it is answered, expires, or its hook goes away;
   * resolves with the hook's reply. `gone` settles when the hook's connection
   * closed before the reply. `slot` (from `reserveHold`) is the card's until it resolves.
   */
  hold(card: AepEvent, holdMs: number, gone: Promise<unknown>, slot: HoldSlot): Promise<HookReply> {
    if (!card.session) {
      slot.release();
      return Promise.resolve(EMPTY_REPLY);
    }
    const session = card.session;
    return new Promise<HookReply>((resolve) => {
      const timer = setTimeout(() => this.expire(card.id), holdMs);
      timer.unref();
      this.held.set(card.id, { card, session, run: card.run, raisedAt: Date.parse(card.time), timer, release: resolve, slot });
      this.counts.held++;
      void gone.then(() => this.dismiss(card.id));
    });
  }

  /** Whether a hook of `session` is held on a gate card now (a person is being asked): the idle close passes it over. */
  holds(session: string): boolean {
    for (const h of this.held.values()) if (h.session === session) return true;
    return false;
  }

  /** A gate card that could not be held (its events not written): closed at once, its call proceeding, its slot given back. */
  abandon(card: AepEvent, slot: HoldSlot): void {
    slot.release();
    void this.closeCard(card.id, card.session, card.run, [{ type: 'attention.resolved', data: { resolution: 'dismissed' } }]);
    this.counts.dismissed++;
  }

  private expire(cardId: string): void {
    const h = this.take(cardId);
    if (!h) return;
    this.counts.expired++;
    const afterMs = Math.max(0, Math.round(this.clock() - h.raisedAt));
    const out = this.closeCard(cardId, h.session, h.run, [{ type: 'attention.timeout', data: { after_ms: afterMs } }]);
    // the vendor's own hook-timeout semantics: the call proceeds
    void out.then(() => h.release(EMPTY_REPLY));
  }

  private dismiss(cardId: string): void {
    const h = this.take(cardId);
    if (!h) return;
    this.counts.dismissed++;
    // how long the call was held before its hook went away (or the daemon stopped): the wait, as for an answer
    const latency = Math.max(0, Math.round(this.clock() - h.raisedAt));
    void this.closeCard(cardId, h.session, h.run, [{ type: 'attention.resolved', data: { resolution: 'dismissed', latency_ms: latency } }]);
    h.release(EMPTY_REPLY);
  }

  private take(cardId: string): Held | undefined {
    const h = this.held.get(cardId);
    if (!h) return undefined;
    clearTimeout(h.timer);
    this.held.delete(cardId);
    h.slot.release();
    this.closed.set(cardId, true);
    return h;
  }

  private closeCard(cardId: string, session: string | undefined, run: string | undefined, events: ControlItem['event'][]): Promise<boolean> {
    this.closed.set(cardId, true);
    if (!session) return Promise.resolve(false);
    const out = this.emitter.emit(
      session,
      events.map((event) => ({ event, run, cause: cardId, subject: cardId })),
    );
    if ('refused' in out) return Promise.resolve(false);
    return out.written;
  }

  /**
   * One command addressed to an own session (routed here by the socket
   * endpoint or the relay link, on an authenticated binding): deduped, decided
   * once, acked within the window (at once), its outcome emitted.
   */
  command(w: WireEvent): void {
    this.counts.commands++;
    const seen = this.ledger.lookup(w);
    if (seen) {
      this.counts.redelivered++;
      // pending: the one forthcoming ack answers every delivery; acked: the recorded ack, byte for byte
      if (seen.state === 'acked') this.emitter.republish(seen.ack);
      return;
    }
    const session = w.session;
    if (session === undefined) return; // routing never sends a session-less command here
    if (this.emitter.refusal() !== undefined) {
      // the history takes no writes now: no decision is made (none could be recorded), the sender's retry is a new command
      this.counts.refused_by_history++;
      return;
    }
    if (!this.budget.take(session, this.clock())) return this.busy(w, session);
    this.ledger.begin(w);
    const decided = this.decide(w, session);
    const items: ControlItem[] =
      decided.ack === 'accepted'
        ? [{ event: { type: 'control.accepted', data: {} }, cause: w.id }, ...decided.outcome]
        : [{ event: { type: 'control.rejected', data: this.nack(decided.reason, decided.detail) }, cause: w.id }];
    const out = this.emitter.emit(session, items, this.stored(w));
    if ('refused' in out) {
      // checked just above, in the same turn: cannot happen; if it did, no decision exists
      this.ledger.forget(w);
      this.counts.refused_by_history++;
      return;
    }
    const ack = out.events[0];
    if (ack) this.ledger.record(w, wireFromOwn(ack));
    if (decided.ack === 'accepted') this.counts.accepted++;
    else this.counts.rejected++;
    if (decided.ack === 'accepted' && decided.release) {
      const release = decided.release;
      void out.written.then(() => release());
    }
  }

  /**
   * A command past the flood budget: its one decision is a `busy` nack
   * (AEP-0004 §3), recorded for redelivery like any ack, but published to the
   * stream and the relay only. Neither it nor the command is written to the
   * history (a legal seq gap there, AEP-0001 §7.2), so a flood's history
   * growth is the budget's. After a restart the command is forgotten: its
   * redelivery is then a new command (§3).
   */
  private busy(w: WireEvent, session: string): void {
    const [ack] = this.emitter.announce(session, [
      { event: { type: 'control.rejected', data: this.nack('busy', 'too many commands for this session or this daemon now; send later') }, cause: w.id },
    ]);
    if (!ack) return;
    this.ledger.record(w, wireFromOwn(ack));
    this.counts.commands_busy++;
  }

  /** the command as this session's history keeps it: as received, or down-leveled to the capture level its type is kept at */
  private stored(w: WireEvent): WireEvent {
    const level = levelFor(this.o.policy, w.type);
    if (!needsDownlevel(w, level)) return w;
    const ev = Object.freeze(downlevel(w.event as CaptureEvent, level)) as Readonly<Record<string, unknown>>;
    return wireOf(ev, JSON.stringify(ev), w.origin);
  }

  private nack(reason: NackReason, detail: string): { reason: NackReason; detail?: string } {
    // the detail is a fixed phrase, but its field is redacted-class: below that level only the reason rides
    return atLeast(this.o.policy, 'control.rejected', 'redacted') ? { reason, detail } : { reason };
  }

  private decide(w: WireEvent, session: string): Decided {
    if (NOT_ADOPTED.has(w.type)) return reject('unsupported', 'not adopted: Hermes offers no cancel, pause or resume write');
    if (!this.accepts().includes(w.type)) return reject('unsupported', "not in this emitter's declared control.accepts");
    if (w.type === RESPOND) return this.respond(w, session);
    return this.instruct(w, session);
  }

  private respond(w: WireEvent, session: string): Decided {
    const subject = w.event['subject'];
    if (typeof subject !== 'string') return reject('invalid', 'subject must be the id of the attention.requested card');
    const h = this.held.get(subject);
    if (!h) {
      if (this.closed.has(subject)) return reject('refused', 'the card is no longer pending (answered, expired or dismissed)');
      return reject('invalid', 'no pending answerable card of this session has that id');
    }
    if (h.session !== session) return reject('invalid', 'no pending answerable card of this session has that id');
    const read = readGateAnswer(w.event['data']);
    if (!read.ok) return reject('invalid', read.detail);
    const taken = this.take(subject)!;
    const latency = Math.max(0, Math.round(this.clock() - taken.raisedAt));
    const answer = this.recorded(read.decision);
    this.counts.answered++;
    return {
      ack: 'accepted',
      outcome: [
        { event: { type: 'attention.answered', data: { answer, via: 'control' } }, run: taken.run, cause: w.id, subject },
        { event: { type: 'attention.resolved', data: { resolution: 'answered', latency_ms: latency } }, run: taken.run, causedByPrevious: true, subject },
      ],
      release: () => taken.release(replyFor(read.decision)),
    };
  }

  /** the answer as the event records it: the option, and its text only at a level that may carry it (redacted on the way) */
  private recorded(d: GateDecision): { option: string; text?: string } {
    const text = d.text !== undefined ? gatedText(this.o.policy, 'attention.answered', d.text) : undefined;
    return text !== undefined ? { option: d.option, text } : { option: d.option };
  }

  private instruct(w: WireEvent, session: string): Decided {
    const text = (w.event['data'] as { text?: unknown } | undefined)?.text;
    if (typeof text !== 'string') return reject('invalid', 'data.text must be a string');
    const item: Instruction = { command: w.id, text, at: this.clock() };
    const added = this.queue.add(session, item);
    if (!added.ok) return reject(added.reason, added.detail);
    return { ack: 'accepted', outcome: [] };
  }

  /**
   * The instructions a session's turn start takes (its `pre_llm_call`, whose
   * reply the transport passes to Hermes): the context text, joined in arrival
   * order, and the audit events that say each was delivered.
   */
  deliver(session: string): { readonly context: string; readonly events: readonly ControlItem['event'][]; readonly causes: readonly string[] } | undefined {
    const taken = this.queue.take(session);
    if (taken.length === 0) return undefined;
    const now = this.clock();
    this.counts.delivered += taken.length;
    return {
      context: taken.map((i) => i.text).join('\n\n'),
      events: taken.map((i) => ({ type: 'x.hermes.instruction.delivered', data: { queued_ms: Math.max(0, Math.round(now - i.at)) } })),
      causes: taken.map((i) => i.command),
    };
  }

  /** The session ends: every instruction it still holds is dropped, each with its audit event (before `session.ended`). */
  drop(session: string): { readonly events: readonly ControlItem['event'][]; readonly causes: readonly string[] } | undefined {
    const taken = this.queue.take(session);
    if (taken.length === 0) return undefined;
    this.counts.dropped += taken.length;
    return {
      events: taken.map(() => ({ type: 'x.hermes.instruction.dropped', data: { reason: 'session-ended' } })),
      causes: taken.map((i) => i.command),
    };
  }

  /** One own event read back at start (the replay buffer's rebuild, in each session's order). */
  restore(w: WireEvent): void {
    this.ledger.restore(w);
    if (w.session === undefined) return;
    if (isGateCard(w.event as { type: string; data?: unknown })) {
      this.orphans.set(w.id, { session: w.session, run: typeof w.event['run'] === 'string' ? w.event['run'] : undefined, epoch: w.epoch });
      return;
    }
    const subject = w.event['subject'];
    if (typeof subject === 'string' && (w.type === 'attention.resolved' || w.type === 'attention.timeout')) {
      this.orphans.delete(subject);
      this.closed.set(subject, true);
    }
  }

  /**
   * After the rebuild: gate cards a previous process raised and never closed
   * (it died holding them; their hooks were answered `{}` by the transport's
   * fail-open) are closed `dismissed` now, and a late answer to one is refused.
   */
  closeOrphans(currentEpoch: number): number {
    let n = 0;
    for (const [id, o] of this.orphans) {
      if (o.epoch >= currentEpoch) continue;
      void this.closeCard(id, o.session, o.run, [{ type: 'attention.resolved', data: { resolution: 'dismissed' } }]);
      n++;
    }
    this.orphans.clear();
    this.counts.dismissed += n;
    return n;
  }

  /** `/healthz` `control` */
  stats(): Record<string, unknown> {
    return {
      gate: this.o.settings.gate,
      instruct: this.o.settings.instruct,
      accepts: this.accepts(),
      hold_ms: this.o.settings.holdMs,
      pending_cards: this.held.size,
      // calls checked against the hold cap whose card is still being written (held next, or not)
      reserved_holds: this.slots.size - this.held.size,
      queued_instructions: this.queue.size,
      remembered_commands: this.ledger.size,
      ...this.counts,
    };
  }

  /** Shutdown: every held hook is answered `{}` now (its card is dismissed), so no Hermes call waits on a stopping daemon. */
  releaseAll(): void {
    for (const id of [...this.held.keys()]) this.dismiss(id);
  }
}

type Decided =
  | { readonly ack: 'accepted'; readonly outcome: readonly ControlItem[]; readonly release?: () => void }
  | { readonly ack: 'rejected'; readonly reason: NackReason; readonly detail: string };

const reject = (reason: NackReason, detail: string): Decided => ({ ack: 'rejected', reason, detail });

function replyFor(d: GateDecision): HookReply {
  if (d.option === 'allow') return EMPTY_REPLY;
  const message = d.text !== undefined && d.text.trim() !== '' ? d.text : DEFAULT_DENY_MESSAGE;
  return { action: 'block', message };
}
