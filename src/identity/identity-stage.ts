import type { CapturePolicy } from '../capture/policy.js';
import { UNKNOWN_SESSION, type AepEvent } from '../aep/event.js';
import type { HookKeys, Joins, KeyedEvent, MappedHook } from '../aep/mapped.js';
import { apply } from './apply.js';
import { decide, stamp, type DecideContext, type Decision, type Extra } from './decide.js';
import { LaneTable, type EndedIndex, type SavedLane } from './lane-table.js';
import type { DormantLane } from './lane-state.js';
import type { SessionLane } from './lanes.js';

export interface IdentityOptions {
  /** the epoch events are stamped with; the daemon settles the final one after the history is read back (enterEpoch) */
  readonly epoch: number;
  /** host part of the `source` URI */
  readonly host: string;
  readonly policy: CapturePolicy;
  readonly newId: () => string;
  /** lanes kept in memory; least recently seen ended lanes go first */
  readonly maxSessions?: number;
  /** sessions already ended, remembered beyond the lanes (persisted by the daemon) */
  readonly ended?: EndedIndex;
}

/** One event a control target emits (IdentityStage.emitControl): its run (undefined: none), cause and subject. */
export interface ControlItem {
  readonly event: KeyedEvent;
  readonly run?: string | undefined;
  readonly cause?: string | undefined;
  readonly subject?: string | undefined;
  /** caused by the event emitted just before it in the same call (an answer's resolution) */
  readonly causedByPrevious?: boolean;
}

/** Counters a supervisor reads from `/healthz`. */
export interface IdentityCounters {
  events: number;
  duplicateStarts: number;
  duplicateTerminals: number;
  unpairedTerminals: number;
  unknownLane: number;
  evictions: number;
  /** card outcomes for a form call that raised no card (no question): nothing to close */
  suppressed: number;
}

/**
 * The identity stage: gives each mapped event its session, run, seq, epoch,
 * cause and subject, and enforces terminal exclusivity. Live, each event is
 * decided (decide.ts) then applied to its lane (apply.ts); at start, the
 * events read back from the history are applied alone, so a restart pairs
 * as if it had never happened. It reads only the AEP-level keys the mapper
 * hands it; it does no I/O and reads no clock (the caller passes `now`).
 */
export class IdentityStage {
  readonly counters: IdentityCounters = {
    events: 0,
    duplicateStarts: 0,
    duplicateTerminals: 0,
    unpairedTerminals: 0,
    unknownLane: 0,
    evictions: 0,
    suppressed: 0,
  };
  private readonly lanes: LaneTable;
  private current: number;
  private readonly count = (what: Decision): void => void this.counters[what]++;

  constructor(private readonly opts: IdentityOptions) {
    this.lanes = new LaneTable(opts.maxSessions ?? 10_000, opts.ended, () => void this.counters.evictions++);
    this.current = opts.epoch;
  }

  /** the epoch events are stamped with */
  get epoch(): number {
    return this.current;
  }

  /**
   * Settle the epoch once the history is read back (it may show a higher one
   * than the state dir's): before the first event, never after, so no two
   * events of one process carry different epochs.
   */
  enterEpoch(epoch: number): void {
    if (this.counters.events > 0 && epoch !== this.current) throw new Error('the epoch is settled: events were emitted in it');
    this.current = epoch;
  }

  get activeSessions(): number {
    return this.lanes.activeSessions;
  }

  /** dormant lanes whose text could not be read back: they started afresh */
  get dormantErrors(): number {
    return this.lanes.dormantErrors;
  }

  /** One hook's events, decided then applied one by one, in order. */
  process(hook: MappedHook, now: Date): AepEvent[] {
    const lane = this.lanes.use(this.sessionOf(hook.keys));
    heard(lane, now.getTime());
    const ctx: DecideContext = { ...this.opts, epoch: this.current, now, count: this.count, closedWithoutCard: new Set() };
    const out: AepEvent[] = [];
    for (const m of hook.events) {
      const joins = m.joins ? { ...hook.keys, ...m.joins } : hook.keys;
      for (const ev of decide(m, hook.keys, lane, ctx)) {
        this.counters.evictions += this.applyTo(lane, ev, joins);
        lane.seq = ev.seq + 1;
        out.push(ev);
      }
    }
    this.counters.events += out.length;
    return out;
  }

  /**
   * Events a control target emits into one of this emitter's sessions outside
   * any hook (acks, an answered or expired gate card): stamped in order at
   * the lane's next seqs with the run, cause and subject the target names, and
   * applied like any other. No pairing decision is made for them: the target
   * knows what each one answers.
   */
  emitControl(session: string, items: readonly ControlItem[], now: Date): AepEvent[] {
    const lane = this.lanes.use(session);
    heard(lane, now.getTime());
    const ctx = { ...this.opts, epoch: this.current, now };
    const out: AepEvent[] = [];
    for (const item of items) {
      const cause = item.causedByPrevious ? out.at(-1)?.id : item.cause;
      const extra: Extra = { run: item.run, cause, subject: item.subject };
      const ev = stamp(item.event, {}, lane, ctx, lane.seq, extra);
      this.counters.evictions += this.applyTo(lane, ev, {});
      lane.seq = ev.seq + 1;
      out.push(ev);
    }
    this.counters.events += out.length;
    return out;
  }

  /**
   * Rebuild pairing state from an event a previous process emitted (read back
   * from the history at start), with the joins the mapper reads off it, so
   * terminals arriving after a restart still find their starts. Emits
   * nothing; `seq` needs no restoring, since the new process runs in a new epoch.
   */
  restore(ev: AepEvent, joins: Joins): void {
    if (!ev.session) return;
    const lane = this.lanes.restoring(ev.session);
    heard(lane, Date.parse(ev.time));
    this.applyTo(lane, ev, joins);
  }

  private applyTo(lane: SessionLane, ev: AepEvent, joins: Joins): number {
    const evicted = apply(lane, ev, joins);
    if (ev.type === 'session.ended') this.opts.ended?.add(lane.session);
    return evicted;
  }

  /** Every lane as JSON text, least recently seen first (the start-up snapshot); see LaneTable.save. */
  saveLanes(): DormantLane[] {
    return this.lanes.save();
  }

  /** Take back saved lanes into a stage that holds none yet; see LaneTable.load. */
  loadLanes(lanes: Iterable<SavedLane>, keep: (session: string) => boolean = () => true): void {
    this.lanes.load(lanes, keep);
  }

  /**
   * Sessions Hermes went quiet in: not ended, last heard from before `cutoff` (ms), or before `waitCutoff` while
   * a card of theirs waits on a person; at most `max`, least recently seen first (see LaneTable.idle).
   */
  idleSessions(cutoff: number, waitCutoff: number, max: number): string[] {
    return this.lanes.idle(cutoff, waitCutoff, max);
  }

  /** The session's runs without a terminal, oldest first. */
  openRuns(session: string): string[] {
    return this.lanes.openRuns(session);
  }

  /** The session a hook belongs to: the one it names, else the one it joins if that has a lane, else `unknown`. */
  private sessionOf(keys: HookKeys): string {
    if (keys.session) return keys.session;
    const join = keys.joinSession;
    if (join && join !== UNKNOWN_SESSION && this.lanes.has(join)) return join;
    this.counters.unknownLane++;
    return UNKNOWN_SESSION;
  }
}

/** The session was heard from at `ms` (a hook's arrival, an event's time read back); never moves back. */
function heard(lane: SessionLane, ms: number): void {
  if (Number.isFinite(ms) && !(lane.last !== undefined && lane.last >= ms)) lane.last = ms;
}
