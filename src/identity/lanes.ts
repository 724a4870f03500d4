import type { RunUsage } from './run-usage.js';

/**
 * Per-session state the identity stage needs to pair starts with terminals:
 * what `apply` (apply.ts) builds from the events, plus `seq`, which only the
 * live stage counts (a new process starts a new epoch at 0). Every map is bounded: an entry evicted for space is counted, and its
 * terminal later simply carries no `cause` (degrading toward less claimed).
 */
export const MAX_PENDING_PER_SESSION = 1024;
export const MAX_ENDED_RUNS_PER_SESSION = 4096;

export interface PendingCard {
  readonly id: string;
  readonly time: number;
  /** approval pairing key `session_key|pattern_key`, or the clarify tool_call_id */
  readonly key: string;
  readonly toolCallId?: string;
  readonly run?: string;
}

export interface SessionLane {
  readonly session: string;
  seq: number;
  startedId?: string;
  ended: boolean;
  /** the most recently started run that has not reached its terminal */
  currentRun?: string;
  readonly openRuns: Map<string, string>;
  readonly endedRuns: Set<string>;
  readonly tools: Map<string, string>;
  /** tool calls that reached their terminal: a repeated post is not a second terminal */
  readonly endedTools: Set<string>;
  /** clarify calls whose pre raised no card (no question): their outcome has no card to close */
  readonly noCard: Set<string>;
  readonly approvals: PendingCard[];
  readonly clarify: Map<string, PendingCard>;
  readonly delegations: Map<string, string>;
  /** open runs' model calls so far (run → sum), handed to the run's terminal */
  readonly usage: Map<string, RunUsage>;
  /**
   * When the session was last heard from (ms since the epoch): a hook's arrival live, an event's `time` read back.
   * Undefined: never (a lane restored without it). The idle close (daemon/idle-close.ts) reads it; pairing never does.
   */
  last?: number;
}

export function newLane(session: string): SessionLane {
  return {
    session,
    seq: 0,
    ended: false,
    openRuns: new Map(),
    endedRuns: new Set(),
    tools: new Map(),
    endedTools: new Set(),
    noCard: new Set(),
    approvals: [],
    clarify: new Map(),
    delegations: new Map(),
    usage: new Map(),
  };
}

/** Insert into a bounded map, evicting the oldest entry; returns true when something was evicted. */
export function boundedSet<K, V>(map: Map<K, V>, key: K, value: V, max: number): boolean {
  map.delete(key);
  map.set(key, value);
  if (map.size <= max) return false;
  const oldest = map.keys().next();
  if (!oldest.done) map.delete(oldest.value);
  return true;
}

export function boundedAdd<K>(set: Set<K>, key: K, max: number): void {
  set.add(key);
  if (set.size > max) {
    const oldest = set.values().next();
    if (!oldest.done) set.delete(oldest.value);
  }
}
