import type { HookEnvelope } from '../hermes/envelope.js';
import type { CapturePolicy } from '../capture/policy.js';
import { readHook } from '../mapping/map-hook.js';
import { hookFacts } from '../mapping/hook-facts.js';
import type { IdentityStage } from '../identity/identity-stage.js';
import type { EventBus } from '../bus/event-bus.js';
import type { AepEvent } from '../aep/event.js';
import type { DriftWatch } from './drift.js';
import type { HookFacts, KeyedEvent, MappedHook } from '../aep/mapped.js';
import type { ControlItem } from '../identity/identity-stage.js';
import type { LiveHook, ReplyPlan, StepResult } from '../control/hook-step.js';
import type { Emitted } from '../control/control-types.js';
import { adoptLine } from '../aep/event-line.js';
import type { WireEvent } from '../aep/wire.js';
import { priceModelCalls, type PriceSource } from '../usage/price-step.js';
import { FirstTokenStep } from '../usage/first-token-step.js';
import { HookCounts } from './hook-counts.js';
import { RetainedKeys } from './retained-keys.js';
import type { WriteOptions } from '../bus/durable-log.js';
import type { EventStage } from '../bus/event-stage.js';

/** The control step (src/control/hook-step.ts), bound to its target: present only while a control gate is on. */
export type ControlStepFn = (mapped: MappedHook, now: Date, live: LiveHook | undefined) => StepResult;
import type { Logger } from '../core/logger.js';

export interface PipelineOptions {
  readonly policy: CapturePolicy;
  readonly identity: IdentityStage;
  /** runs after identity, before the bus (the span context stage when the mirror is on) */
  readonly stamp?: EventStage;
  readonly bus: EventBus;
  readonly drift: DriftWatch;
  readonly clock?: () => Date;
  readonly log?: Logger;
  /** the control gates' step between mapping and identity (gates on only) */
  readonly control?: ControlStepFn;
  /** prices model calls between mapping and identity (src/usage/); absent: model calls carry no cost */
  readonly pricer?: PriceSource;
  /**
   * Whether the spool holds parked hooks of this session (its history file failed): a LIVE hook of it is refused
   * (503, the shim spools it behind them) so it never overtakes them. Spooled hooks are not asked.
   */
  readonly spoolHolds?: (session: string) => boolean;
}

/**
 * What became of one hook, when it is answered:
 * - `recorded`: every event it became reached the operating system (or it became none);
 * - `refused`: a durable log could not take it (log failing, queue full), so it was
 *   NOT processed at all: no seq taken, no pairing state, no span. Safe to retry later;
 * - `retained`: processed, but the write failed: its events are held in memory (bounded)
 *   and written first when the log takes writes again. `written` settles true then,
 *   false if they were given up (counted). A live hook is held only under its spool key
 *   (`x-hermes-aep-spool-key`): it is answered 503, its transport spools it under that
 *   key, its events land carrying it (`hermesspool`), and the spooled copy is then
 *   recognised (`retainedKeys`) and dropped; a crash before they land leaves only the
 *   spooled copy, ingested fresh at the next start;
 * - `lost`: processed, and some events were given up at once (counted). A live hook
 *   without a spool key whose write failed ends here (answered 503: nothing of it is
 *   written later, so its re-delivery is processed once).
 */
export type HookOutcome = (
  | { readonly status: 'recorded'; readonly events: readonly AepEvent[] }
  | { readonly status: 'refused'; readonly reason: string }
  | { readonly status: 'retained'; readonly events: readonly AepEvent[]; readonly reason: string; readonly written: Promise<boolean> }
  | { readonly status: 'lost'; readonly events: readonly AepEvent[]; readonly lost: number; readonly reason: string }
) & {
  /** how the reply is made (a control gate asked for it: a hold, a steering context); absent: `{}` */
  readonly plan?: ReplyPlan;
};

/**
 * One hook, start to finish: admission → drift check → pure mapping →
 * identity → stamp → bus. Everything up to the bus runs synchronously, in arrival
 * order (that is what orders each session's events); the returned promise
 * settles when the durable logs have the events (group commit), and never
 * rejects.
 */
export class HookPipeline {
  hooks = 0;
  /** the same hooks by Hermes hook name (the `aep.hooks` metric) */
  readonly byHook = new HookCounts();
  /** hooks whose mapping or stamping threw: answered, counted, logged by class; never a crash */
  failed = 0;
  /** hooks refused before processing because a durable log could not take them */
  refused = 0;
  /** hooks answered while their events were held in memory after a failed write */
  retained = 0;
  /** hooks processed whose events (some or all) were given up */
  lost = 0;
  /** spool keys of live hooks held after a failed write (answered 503): spool-ingest.ts drops their spooled copy once written */
  readonly retainedKeys = new RetainedKeys();

  private readonly clock: () => Date;
  /** stream hooks timed into their model call's first_token_ms */
  private readonly firstToken = new FirstTokenStep();
  /** settles once everything published so far has settled (its after-durable consumers called) */
  private tail: Promise<unknown> = Promise.resolve();

  constructor(private readonly o: PipelineOptions) {
    this.clock = o.clock ?? (() => new Date());
  }

  /**
   * `spooled`: the hook came from the shim's spool. Its events are timed at
   * its arrival, and carry its spool key (`hermesspool`) so a restart can tell
   * a file whose events were written but which was not yet deleted.
   * `spoolKey`: a live hook's `x-hermes-aep-spool-key` (see HookOutcome `retained`).
   */
  handle(env: HookEnvelope, spooled?: { readonly arrival: Date; readonly key: string }, live?: LiveHook, spoolKey?: string): Promise<HookOutcome> {
    this.hooks++;
    this.byHook.count(env.hook_event_name);
    // a session whose own history file fails is refused alone; the others flow
    const refusal =
      this.o.bus.refusal(env.session_id || undefined) ??
      (!spooled && env.session_id && this.o.spoolHolds?.(env.session_id) ? 'spool holds earlier hooks of this session' : undefined);
    if (refusal) {
      this.refused++;
      return Promise.resolve({ status: 'refused', reason: refusal });
    }
    // before the mapping, and whatever becomes of it: a hook that cannot be mapped is still a drift sign
    this.o.drift.check(env.hook_event_name, hookFacts(env).schemaVersion());
    let events: readonly AepEvent[];
    let plan: ReplyPlan | undefined;
    try {
      const now = spooled?.arrival ?? this.clock();
      let mapped = readHook(env, this.o.policy);
      // a spooled hook's arrival is no stream moment: only live hooks are timed
      if (!spooled) mapped = this.firstToken.apply(mapped, now.getTime());
      if (this.o.pricer) mapped = priceModelCalls(mapped, this.o.pricer, now);
      if (this.o.control) {
        // a spooled hook was answered long ago: it can drop instructions at a session end, never hold or deliver
        const step = this.o.control(mapped, now, spooled ? undefined : live);
        mapped = step.mapped;
        plan = step.plan;
      }
      events = this.o.identity.process(mapped, now);
      if (spooled) events = events.map((e) => ({ ...e, hermesspool: spooled.key }));
      if (this.o.stamp) events = this.o.stamp.process(events);
      events = events.map((e) => Object.freeze(e));
    } catch (err) {
      // a hold reserved by the control step is not made: its slot goes back under the cap
      if (plan?.kind === 'hold') plan.slot.release();
      this.failed++;
      this.o.log?.error('hook could not be mapped; answered and counted', { error: (err as Error).name });
      return Promise.resolve({ status: 'recorded', events: [] });
    }
    // live: held after a failed write only under a spool key; spooled: held (the file stays until written)
    const opts: WriteOptions | undefined = spooled ? undefined : spoolKey !== undefined ? { spoolKey } : { hold: false };
    return this.publish(events, plan, env.hook_event_name, opts, spoolKey);
  }

  /**
   * A control target's events for one own session, outside any hook (acks,
   * a gate card's outcome): stamped now, in order, after the command that
   * caused them when one is given (written as received: seq-less, never
   * stamped). Refused, like a hook, while a durable log cannot take them.
   */
  emitControl(session: string, items: readonly ControlItem[], command?: WireEvent): Emitted {
    const refusal = this.o.bus.refusal();
    if (refusal) return { refused: refusal };
    const events = this.stampControl(session, items);
    if (events === undefined) return { events: [], written: Promise.resolve(false) };
    const all = command ? [commandEvent(command), ...events] : events;
    const written = this.publish(all, undefined, 'control').then((o) => (o.status === 'retained' ? o.written : o.status === 'recorded'));
    return { events, written };
  }

  /**
   * A control target's events stamped into one own session (seqs taken, the
   * span context stage applied unless `mirrored` is false, frozen), not
   * published: undefined when they could not be stamped (counted in `hooks_failed`).
   */
  stampControl(session: string, items: readonly ControlItem[], mirrored = true): readonly AepEvent[] | undefined {
    try {
      let events: readonly AepEvent[] = this.o.identity.emitControl(session, items, this.clock());
      if (this.o.stamp && mirrored) events = this.o.stamp.process(events);
      return events.map((e) => Object.freeze(e));
    } catch (err) {
      this.failed++;
      this.o.log?.error('control events could not be stamped; counted', { error: (err as Error).name });
      return undefined;
    }
  }

  /**
   * End a session Hermes stopped speaking in (idle-close.ts): each run it left open fails `idle`, then
   * `session.ended {reason: timeout}` carrying `hermesendedby: idle`, through the same steps as a hook's events
   * (the control step drops the instructions still queued for it, identity dismisses its pending cards and refuses
   * a second end). `undefined` when the session's log refuses events now (the next sweep tries again).
   */
  endIdle(session: string): Promise<HookOutcome> | undefined {
    if (this.o.bus.refusal(session)) return undefined;
    let events: AepEvent[] = [];
    try {
      const now = this.clock();
      for (const run of this.o.identity.openRuns(session)) {
        events.push(...this.o.identity.process({ keys: { session, run }, events: [IDLE_RUN_END], facts: NO_FACTS }, now));
      }
      let end: MappedHook = { keys: { session }, events: [IDLE_SESSION_END], facts: NO_FACTS };
      if (this.o.control) end = this.o.control(end, now, undefined).mapped;
      events.push(...this.o.identity.process(end, now));
      if (this.o.stamp) events = [...this.o.stamp.process(events)];
      events = events.map((e) => Object.freeze(e));
    } catch (err) {
      this.failed++;
      this.o.log?.error('an idle session could not be ended; counted', { error: (err as Error).name });
      return Promise.resolve({ status: 'recorded', events: [] });
    }
    return this.publish(events, undefined, 'idle');
  }

  /** whether a durable log refuses new events now (a code, never content) */
  refusal(): string | undefined {
    return this.o.bus.refusal();
  }

  private publish(events: readonly AepEvent[], plan: ReplyPlan | undefined, hook: string, opts?: WriteOptions, spoolKey?: string): Promise<HookOutcome> {
    const published = opts ? this.o.bus.publish(events, opts) : this.o.bus.publish(events);
    // AEP_DEBUG: the hook name and the event types and seqs it became; structural only (not built when debug is off)
    if (this.o.log && this.o.log.debugEnabled !== false)
      this.o.log.debug('hook mapped', {
        hook: /^[a-z0-9_]{1,64}$/.test(hook) ? hook : 'other',
        events: events.map((e) => `${e.type}#${e.seq}`).join(','),
      });
    const p = plan ? { plan } : {};
    const out = published.then((r): HookOutcome => {
      const reason = r.reason ?? 'not written';
      if (r.lost > 0) {
        this.lost++;
        return { status: 'lost', events, lost: r.lost, reason, ...p };
      }
      if (r.retained > 0) {
        this.retained++;
        const written = (r.finalLost ?? Promise.resolve(0)).then((lost) => {
          if (lost > 0) this.lost++;
          return lost === 0;
        });
        if (spoolKey !== undefined) this.retainedKeys.hold(spoolKey, written);
        return { status: 'retained', events, reason, written, ...p };
      }
      return { status: 'recorded', events, ...p };
    });
    this.tail = out.then(
      () => undefined,
      () => undefined,
    );
    return out;
  }

  /**
   * `fn` runs once everything published so far has settled: an event stamped
   * now but published outside the bus (to the stream only) then follows the
   * events stamped before it, so no consumer sees a session's seqs regress.
   */
  afterPublished(fn: () => void): void {
    void this.tail.then(fn);
  }
}

/** The facts of events no hook brought (the idle close): nothing to hold, steer, price or time. */
const NO_FACTS: HookFacts = {
  mayHold: false,
  maySteer: false,
  toolName: () => undefined,
  modelServer: () => undefined,
  schemaVersion: () => undefined,
  stream: () => undefined,
};

/** A run its session went quiet in: it reached no terminal Hermes reported (AEP-0002 `run.failed`, a machine token). */
const IDLE_RUN_END: KeyedEvent = { type: 'run.failed', data: { reason: 'idle' } };
/** A session Hermes went quiet in, ended by the daemon: the AEP reason `timeout`, the extension attribute says by what. */
const IDLE_SESSION_END: KeyedEvent = { type: 'session.ended', data: { reason: 'timeout' }, ext: { hermesendedby: 'idle' } };

/**
 * A command as the session's history keeps it: its envelope as received
 * (frozen, its line the received bytes), the same object the stream then
 * carries. It has no seq: the sender does not own the session's order.
 */
function commandEvent(w: WireEvent): AepEvent {
  const ev = Object.isFrozen(w.event) ? w.event : Object.freeze({ ...w.event });
  adoptLine(ev as unknown as AepEvent, w.line);
  return ev as unknown as AepEvent;
}
