import { RecencyMap, RecencySet } from '../util/recency-map.js';
import { ceilingLine } from './ceiling.js';
import type { EventFilter } from './hub-types.js';
import { mergeByArrival } from './hub/merge.js';
import { Ring, RingList, type Held } from './hub/ring.js';
import { comparePosition, dedupeKey, type Position, type WireEvent } from '../aep/wire.js';

export interface ReplayBufferOptions {
  /** events held per session (and in the agent-scoped lane) */
  readonly buffer: number;
  /** sessions held; the least recently active is evicted whole */
  readonly sessions: number;
  /** bytes of lines held over everything */
  readonly maxBytes: number;
  /** evicted `(source, id)` keys still remembered for admission dedupe (default: buffer × sessions, within 1,024 to 100,000) */
  readonly forget?: number;
}

/** One step of a replay: an event, or the AEP-0003 §5 `replay-exhausted` notice before a session's events. */
export type ReplayStep = { readonly w: WireEvent } | { readonly exhausted: { readonly session: string; readonly earliest: { epoch: number; seq: number } } };

type Pos = { epoch: number; seq: number };
const hasSeq = (w: WireEvent): w is WireEvent & { seq: number } => w.seq !== undefined;

/**
 * The bounded replay buffer of AEP-0003 §5: per-session rings keyed by bare
 * `session` (AEP-0001 §5.2), agent-scoped events in one ring of their own,
 * the least recently active session evicted whole past `sessions`, the oldest
 * events evicted past `buffer` per session or `maxBytes` overall. Admission
 * dedupes on `(source, id)` (AEP-0001 §7.4) over everything held plus a
 * bounded memory of evicted keys.
 */
export class ReplayBuffer {
  private readonly rings = new Map<string, Ring>();
  private readonly recency = new RingList();
  private readonly agentRing = new Ring(undefined);
  private readonly held = new Set<string>();
  private readonly forgotten: RecencySet<string>;
  /** the highest evicted position of the last max(1,024, sessions) sessions evicted whole: a later resume still learns it lost events */
  private readonly lostSessions: RecencyMap<string, Pos>;
  /**
   * The sessions of this daemon's own emitter (AEP-0001 §7.1: it alone assigns their positions) of the
   * last max(1,024, sessions) seen, held or evicted: no other emitter's sequenced event enters their lane.
   */
  private readonly ownNames: RecencySet<string>;
  private arrivals = 0;
  private bytes = 0;
  private events = 0;
  evicted = 0;
  /** foreign sequenced events taken out of a lane that turned out to be an own session's */
  ownLaneEvicted = 0;

  constructor(private readonly o: ReplayBufferOptions) {
    this.forgotten = new RecencySet(Math.max(1, o.forget ?? Math.max(1024, Math.min(o.buffer * o.sessions, 100_000))));
    this.lostSessions = new RecencyMap(Math.max(1024, o.sessions));
    this.ownNames = new RecencySet(Math.max(1024, o.sessions));
  }

  /**
   * Whether `w` would take a position in an own session's lane that this
   * daemon did not assign: another emitter's sequenced event naming an own
   * session. Resume tokens name the bare session (AEP-0001 §7.6), so such an
   * event would move the lane's high-water mark; it is never admitted.
   */
  collides(w: WireEvent): boolean {
    if (w.origin === 'own' || w.session === undefined || !hasSeq(w)) return false;
    return this.ownNames.has(w.session) || this.rings.get(w.session)?.own === true;
  }

  knows(w: Pick<WireEvent, 'source' | 'id'>): boolean {
    const k = dedupeKey(w);
    return this.held.has(k) || this.forgotten.has(k);
  }

  /** Hold `w` unless its `(source, id)` is known: false for a duplicate. */
  admit(w: WireEvent): boolean {
    const key = dedupeKey(w);
    if (this.held.has(key) || this.forgotten.has(key) || this.collides(w)) return false;
    const h: Held = { w, n: this.arrivals++, bytes: ceilingLine(w).bytes };
    const ring = w.session === undefined ? this.agentRing : this.ringOf(w.session);
    ring.push(h);
    this.held.add(key);
    this.events++;
    this.bytes += h.bytes;
    if (w.origin === 'own') {
      if (!ring.own && w.session !== undefined) this.becomeOwn(ring, w.session);
      ring.own = true;
      if (w.type === 'session.ended') ring.ended = true;
    }
    if (ring.length > this.o.buffer) this.evictOne(ring);
    if (this.rings.size > this.o.sessions) this.evictSession(this.recency.oldest!);
    while (this.bytes > this.o.maxBytes && this.events > 0) this.evictOldest();
    return true;
  }

  /**
   * A lane whose first own event just arrived: the sequenced events another
   * emitter put there first (it took the name before this daemon's session
   * started) leave it, remembered as known; what was lost of them is no loss of the own lane.
   */
  private becomeOwn(ring: Ring, session: string): void {
    const known = this.ownNames.has(session);
    this.ownNames.add(session);
    if (known) return;
    ring.lost = undefined;
    for (const h of ring.removeWhere((x) => x.w.origin !== 'own' && hasSeq(x.w))) {
      this.events--;
      this.evicted++;
      this.ownLaneEvicted++;
      this.bytes -= h.bytes;
      const key = dedupeKey(h.w);
      this.held.delete(key);
      this.forgotten.add(key);
    }
  }

  private ringOf(session: string): Ring {
    let r = this.rings.get(session);
    if (!r) {
      r = new Ring(session);
      r.lost = this.lostSessions.get(session);
      this.lostSessions.delete(session);
      this.rings.set(session, r);
    }
    this.recency.touch(r);
    return r;
  }

  private evictOne(ring: Ring): void {
    const h = ring.shift();
    if (!h) return;
    this.events--;
    this.evicted++;
    this.bytes -= h.bytes;
    const key = dedupeKey(h.w);
    this.held.delete(key);
    this.forgotten.add(key);
    if (hasSeq(h.w) && (ring.lost === undefined || comparePosition(h.w, ring.lost) > 0)) ring.lost = { epoch: h.w.epoch, seq: h.w.seq };
    if (ring.length === 0 && ring.session !== undefined) this.dropRing(ring);
  }

  private evictSession(ring: Ring): void {
    while (ring.length > 0) this.evictOne(ring);
  }

  private dropRing(ring: Ring): void {
    const session = ring.session!;
    this.rings.delete(session);
    this.recency.remove(ring);
    if (ring.lost) this.lostSessions.set(session, ring.lost);
  }

  /** Past `maxBytes`: the older of the least recently active session's oldest event and the agent lane's oldest. */
  private evictOldest(): void {
    const s = this.recency.oldest;
    const a = this.agentRing.peek();
    if (s && (!a || s.peek()!.n < a.n)) this.evictOne(s);
    else this.evictOne(this.agentRing);
  }

  /**
   * What a subscription replays, in order (AEP-0003 §5, §7). For positions:
   * per position, `exhausted` first when an event after it was evicted, then
   * the session's held events strictly after it, with its seq-less events
   * that arrived after the position's event (or every held one when that
   * event is not held); an unknown session replays nothing. For `all`: every
   * held event, agent lane included, in arrival order, never `exhausted`.
   */
  plan(from: readonly Position[] | 'all', filter: EventFilter): ReplayStep[] {
    const out: ReplayStep[] = [];
    if (from === 'all') {
      for (const h of mergeByArrival([this.agentRing, ...this.rings.values()], (x) => filter(x.w))) out.push({ w: h.w });
      return out;
    }
    for (const asked of from) {
      const ring = this.rings.get(asked.session);
      // a position past anything an own lane assigned is none of its own (another emitter's, a forged one): nothing of the lane is skipped for it
      const p = ring?.own && beyond(ring, asked) ? { session: asked.session, epoch: -1, seq: -1 } : asked;
      const lost = ring ? ring.lost : this.lostSessions.get(p.session);
      if (lost && comparePosition(lost, p) > 0) out.push({ exhausted: { session: p.session, earliest: earliestAfter(ring, lost) } });
      if (!ring) continue;
      // seq-less events count from the arrival of the position's own event (else the latest held one at or before it)
      let cutoff = -1;
      let exact = -1;
      for (const h of ring) {
        if (!hasSeq(h.w)) continue;
        const c = comparePosition(h.w, p);
        if (c === 0) exact = h.n;
        else if (c < 0) cutoff = Math.max(cutoff, h.n);
      }
      if (exact >= 0) cutoff = exact;
      for (const h of ring) {
        const after = hasSeq(h.w) ? comparePosition(h.w, p) > 0 : h.n > cutoff;
        if (after && filter(h.w)) out.push({ w: h.w });
      }
    }
    return out;
  }

  ownSessions(): string[] {
    const out: string[] = [];
    for (const r of this.rings.values()) if (r.own && !r.ended) out.push(r.session!);
    return out;
  }

  isOwnSession(session: string): boolean {
    return this.rings.get(session)?.own === true;
  }

  stats(): { sessions: number; events: number; bytes: number; evicted: number; own_lane_evicted: number } {
    return { sessions: this.rings.size, events: this.events, bytes: this.bytes, evicted: this.evicted, own_lane_evicted: this.ownLaneEvicted };
  }
}

/** Whether `p` is past the highest position the lane holds or lost: it never assigned it. */
function beyond(ring: Ring, p: Pos): boolean {
  let top: Pos | undefined = ring.lost;
  for (const h of ring) if (hasSeq(h.w) && (top === undefined || comparePosition(h.w, top) > 0)) top = { epoch: h.w.epoch, seq: h.w.seq };
  return top !== undefined && comparePosition(p, top) > 0;
}

/** The earliest held position of a session (what replay resumes from), else the one right after what was lost. */
function earliestAfter(ring: Ring | undefined, lost: Pos): Pos {
  let min: Pos | undefined;
  if (ring) for (const h of ring) if (hasSeq(h.w) && (min === undefined || comparePosition(h.w, min) < 0)) min = { epoch: h.w.epoch, seq: h.w.seq };
  return min ?? { epoch: lost.epoch, seq: lost.seq + 1 };
}
