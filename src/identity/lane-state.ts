import type { PendingCard, SessionLane } from './lanes.js';
import { isRunUsageState, loadRunUsage, saveRunUsage, type RunUsageState } from './run-usage.js';

/**
 * One session lane as JSON, for the start-up snapshot. `seq` is NOT
 * kept: the process that loads a snapshot runs in a new epoch, where every
 * session's seq starts again at 0 (AEP-0001 §7), exactly as after a replay of
 * the log. Maps are [key, value] lists in their own (eviction) order.
 */
export interface LaneState {
  readonly session: string;
  readonly startedId?: string;
  readonly ended: boolean;
  readonly currentRun?: string;
  readonly openRuns: [string, string][];
  readonly endedRuns: string[];
  readonly tools: [string, string][];
  readonly endedTools: string[];
  readonly noCard: string[];
  readonly approvals: CardState[];
  readonly clarify: [string, CardState][];
  readonly delegations: [string, string][];
  /** absent in a snapshot written before model calls were summed: none */
  readonly usage?: [string, RunUsageState][];
}

/** [id, time, key, toolCallId | null, run | null] */
export type CardState = [string, number, string, string | null, string | null];

const card = (c: PendingCard): CardState => [c.id, c.time, c.key, c.toolCallId ?? null, c.run ?? null];

const uncard = ([id, time, key, toolCallId, run]: CardState): PendingCard => ({
  id,
  time,
  key,
  ...(toolCallId !== null ? { toolCallId } : {}),
  ...(run !== null ? { run } : {}),
});

function saveLane(l: SessionLane): LaneState {
  return {
    session: l.session,
    ...(l.startedId !== undefined ? { startedId: l.startedId } : {}),
    ended: l.ended,
    ...(l.currentRun !== undefined ? { currentRun: l.currentRun } : {}),
    openRuns: [...l.openRuns],
    endedRuns: [...l.endedRuns],
    tools: [...l.tools],
    endedTools: [...l.endedTools],
    noCard: [...l.noCard],
    approvals: l.approvals.map(card),
    clarify: [...l.clarify].map(([k, c]) => [k, card(c)]),
    delegations: [...l.delegations],
    ...(l.usage.size > 0 ? { usage: [...l.usage].map(([run, u]): [string, RunUsageState] => [run, saveRunUsage(u)]) } : {}),
  };
}

/**
 * A lane not in use since it was saved or loaded: kept as its JSON text, and
 * only parsed when an event touches it again. The stage's map holds either
 * form, in one recency order; a start-up snapshot of 10,000 sessions is thus
 * read without parsing the lanes nobody uses, and a periodic snapshot
 * serializes only the lanes touched since the previous one.
 */
export interface DormantLane {
  readonly session: string;
  readonly ended: boolean;
  readonly seq: number;
  /** when the session was last heard from (SessionLane.last); kept beside the text so a dormant lane is never parsed for it */
  readonly last?: number;
  /** the lane as `encodeLane` wrote it (UTF-8 bytes when read from a snapshot: decoded only if used) */
  readonly dormant: string | Uint8Array;
}

export const isDormant = (l: SessionLane | DormantLane): l is DormantLane => 'dormant' in l;

/** A dormant lane's JSON as text. */
export const laneText = (d: DormantLane): string =>
  typeof d.dormant === 'string' ? d.dormant : Buffer.from(d.dormant.buffer, d.dormant.byteOffset, d.dormant.byteLength).toString('utf8');

export function encodeLane(l: SessionLane): string {
  return JSON.stringify(saveLane(l));
}

/** The lane `encodeLane` described, at `seq`; throws if the text is not such a lane. */
export function decodeLane(text: string | Uint8Array, seq: number, session: string): SessionLane {
  const s = checkLane(JSON.parse(typeof text === 'string' ? text : Buffer.from(text.buffer, text.byteOffset, text.byteLength).toString('utf8')));
  if (s.session !== session) throw new Bad('invalid lane state: session');
  return {
    session: s.session,
    seq,
    ...(s.startedId !== undefined ? { startedId: s.startedId } : {}),
    ended: s.ended,
    ...(s.currentRun !== undefined ? { currentRun: s.currentRun } : {}),
    openRuns: new Map(s.openRuns),
    endedRuns: new Set(s.endedRuns),
    tools: new Map(s.tools),
    endedTools: new Set(s.endedTools),
    noCard: new Set(s.noCard),
    approvals: s.approvals.map(uncard),
    clarify: new Map(s.clarify.map(([k, c]) => [k, uncard(c)])),
    delegations: new Map(s.delegations),
    usage: new Map((s.usage ?? []).map(([run, u]) => [run, loadRunUsage(u)])),
  };
}

class Bad extends Error {
  override readonly name = 'InvalidLaneState';
}
const fail = (what: string): never => {
  throw new Bad(`invalid lane state: ${what}`);
};
const isStr = (v: unknown): v is string => typeof v === 'string';
const optStr = (v: unknown): boolean => v === undefined || isStr(v);
const strs = (v: unknown): boolean => Array.isArray(v) && v.every(isStr);
const strPairs = (v: unknown): boolean => Array.isArray(v) && v.every((p) => Array.isArray(p) && p.length === 2 && isStr(p[0]) && isStr(p[1]));
const isCard = (c: unknown): boolean =>
  Array.isArray(c) &&
  c.length === 5 &&
  isStr(c[0]) &&
  typeof c[1] === 'number' &&
  Number.isFinite(c[1]) &&
  isStr(c[2]) &&
  (c[3] === null || isStr(c[3])) &&
  (c[4] === null || isStr(c[4]));

/** Check one parsed lane field by field; throws on the first thing out of place. */
export function checkLane(l: unknown): LaneState {
  if (typeof l !== 'object' || l === null) fail('lane');
  const s = l as Record<string, unknown>;
  if (!isStr(s.session) || !optStr(s.startedId) || typeof s.ended !== 'boolean' || !optStr(s.currentRun)) fail('lane identity');
  if (!strPairs(s.openRuns) || !strs(s.endedRuns) || !strPairs(s.tools) || !strs(s.endedTools) || !strs(s.noCard)) fail('lane runs and tools');
  if (!Array.isArray(s.approvals) || !s.approvals.every(isCard)) fail('lane approvals');
  if (!Array.isArray(s.clarify) || !s.clarify.every((p) => Array.isArray(p) && p.length === 2 && isStr(p[0]) && isCard(p[1]))) fail('lane clarify');
  if (!strPairs(s.delegations)) fail('lane delegations');
  if (s.usage !== undefined && !(Array.isArray(s.usage) && s.usage.every((p) => Array.isArray(p) && p.length === 2 && isStr(p[0]) && isRunUsageState(p[1]))))
    fail('lane usage');
  return s as unknown as LaneState;
}
