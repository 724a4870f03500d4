import { UNKNOWN_SESSION } from '../aep/event.js';
import { boundedSet, newLane, type SessionLane } from './lanes.js';
import { decodeLane, encodeLane, isDormant, type DormantLane } from './lane-state.js';

/** A lane as the snapshot keeps it: its session, whether it ended, when it was last heard from, its JSON. */
export interface SavedLane {
  readonly session: string;
  readonly ended: boolean;
  readonly last?: number;
  readonly dormant: string | Uint8Array;
}

/** A card the session's emitter raised is still open: Hermes waits on a person (an approval, a clarify question). */
const waiting = (lane: SessionLane): boolean => lane.approvals.length > 0 || lane.clarify.size > 0;

/** Sessions already ended, remembered beyond the lanes (persisted by the daemon). */
export interface EndedIndex {
  has(session: string): boolean;
  add(session: string): void;
}

/**
 * Every session's lane, live or dormant (see lane-state.ts), in one recency
 * order (Map order), bounded: past `maxSessions` the least recently seen go,
 * and their seq high-water marks stay, so a returning session never reuses a
 * seq in this epoch.
 */
export class LaneTable {
  private readonly lanes = new Map<string, SessionLane | DormantLane>();
  /** seq high-water marks of evicted lanes */
  private readonly seqFloor = new Map<string, number>();
  /** highest seq any evicted lane reached, and the start for new lanes once a floor was forgotten */
  private maxSeqEvicted = 0;
  private forgottenFloor = 0;
  /** dormant lanes whose text could not be read back: they start afresh (counted, never a crash) */
  dormantErrors = 0;

  constructor(
    private readonly maxSessions: number,
    private readonly ended: EndedIndex | undefined,
    /** a lane was evicted for space */
    private readonly onEvict: () => void,
  ) {}

  get activeSessions(): number {
    let n = 0;
    for (const lane of this.lanes.values()) if (!lane.ended && lane.session !== UNKNOWN_SESSION) n++;
    return n;
  }

  has(session: string): boolean {
    return this.lanes.has(session);
  }

  /** The lane a live event goes to, made the most recent; a new one starts above any seq its session had in this epoch. */
  use(session: string): SessionLane {
    let lane = this.live(session);
    if (lane) {
      this.lanes.delete(session); // re-insert: Map order is recency order
    } else {
      lane = this.fresh(session);
      lane.seq = this.seqFloor.get(session) ?? this.forgottenFloor;
      this.seqFloor.delete(session);
    }
    this.lanes.set(session, lane);
    this.evictIfFull(session);
    return lane;
  }

  /** The lane an event read back from the history goes to; its place in the recency order is where it first appeared. */
  restoring(session: string): SessionLane {
    let lane = this.live(session);
    if (!lane) {
      lane = this.fresh(session);
      this.lanes.set(session, lane);
      this.evictIfFull(session);
    }
    return lane;
  }

  private fresh(session: string): SessionLane {
    const lane = newLane(session);
    lane.ended = this.ended?.has(session) ?? false;
    return lane;
  }

  /**
   * Every lane as JSON text, least recently seen first (the start-up
   * snapshot). Lanes used since the previous call are serialized and go
   * dormant; the others are already text. Synchronous.
   */
  save(): DormantLane[] {
    const out: DormantLane[] = [];
    for (const [session, slot] of this.lanes) {
      if (isDormant(slot)) {
        out.push(slot);
        continue;
      }
      const d: DormantLane = { session, ended: slot.ended, seq: slot.seq, ...(slot.last !== undefined ? { last: slot.last } : {}), dormant: encodeLane(slot) };
      this.lanes.set(session, d); // same key: keeps its place in the recency order
      out.push(d);
    }
    return out;
  }

  /**
   * Take back saved lanes, dormant, into a table that holds none yet, in their
   * order, each with seq 0: the new process runs in a new epoch (AEP-0001 §7),
   * as after a replay. Lanes `keep` refuses are left out; past `maxSessions`
   * the least recently seen go, as at runtime.
   */
  load(lanes: Iterable<SavedLane>, keep: (session: string) => boolean): void {
    if (this.lanes.size > 0) throw new Error('loadLanes needs a stage without lanes');
    for (const l of lanes) {
      if (!keep(l.session)) continue;
      const ended = l.ended || (this.ended?.has(l.session) ?? false);
      this.lanes.delete(l.session);
      this.lanes.set(l.session, { session: l.session, ended, seq: 0, ...(l.last !== undefined ? { last: l.last } : {}), dormant: l.dormant });
      this.evictIfFull(l.session);
    }
  }

  /** The lane of a session in its live form (a dormant one is parsed where it stands), if there is one. */
  private live(session: string): SessionLane | undefined {
    const slot = this.lanes.get(session);
    if (slot === undefined || !isDormant(slot)) return slot;
    let lane: SessionLane;
    try {
      lane = decodeLane(slot.dormant, slot.seq, session);
    } catch {
      this.dormantErrors++;
      lane = newLane(session);
      lane.seq = slot.seq;
    }
    lane.ended ||= slot.ended;
    if (slot.last !== undefined) lane.last = slot.last;
    this.lanes.set(session, lane);
    return lane;
  }

  /**
   * Up to `max` sessions not ended whose last word is older than `cutoff` (ms), or than `waitCutoff` while a card
   * of theirs is pending (a person is being asked), least recently seen first. A lane never heard from since it
   * was restored without a time is not idle. Reads the dormant lanes' `last` without parsing them, parsing only
   * the candidates (to see their cards): one pass over the table, bounded by `maxSessions`.
   */
  idle(cutoff: number, waitCutoff: number, max: number): string[] {
    const out: string[] = [];
    for (const slot of [...this.lanes.values()]) {
      if (out.length >= max) break;
      if (slot.ended || slot.session === UNKNOWN_SESSION || slot.last === undefined || slot.last >= cutoff) continue;
      if (slot.last >= waitCutoff && waiting(this.live(slot.session)!)) continue;
      out.push(slot.session);
    }
    return out;
  }

  /** The session's open runs, oldest first (none without a lane). */
  openRuns(session: string): string[] {
    return [...(this.live(session)?.openRuns.keys() ?? [])];
  }

  /**
   * Evict the least recently seen lanes (Map order is recency order), never
   * the one being handed back: its events are about to be stamped from it.
   */
  private evictIfFull(keep: string): void {
    while (this.lanes.size > this.maxSessions) {
      let victim: SessionLane | DormantLane | undefined;
      for (const lane of this.lanes.values()) {
        if (lane.session !== keep) {
          victim = lane;
          break;
        }
      }
      if (!victim) return;
      this.lanes.delete(victim.session);
      this.maxSeqEvicted = Math.max(this.maxSeqEvicted, victim.seq);
      // once a floor is forgotten, new lanes start above every seq an evicted lane reached
      if (boundedSet(this.seqFloor, victim.session, victim.seq, this.maxSessions * 10)) this.forgottenFloor = this.maxSeqEvicted;
      this.onEvict();
    }
  }
}
