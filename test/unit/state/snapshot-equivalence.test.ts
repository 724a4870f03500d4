import { describe, expect, it } from 'vitest';
import { cpSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { AepEvent } from '../../../src/aep/event.js';
import { tempDir } from '../../support/processes.js';
import { SENTINEL, type Envelope } from '../../support/scripted-session.js';
import { soakSchedule, soakSession, soakSessionId } from '../../support/soak-history.js';
import { laneText } from '../../../src/identity/lane-state.js';
import { openWorld, spanJson, type World } from '../../support/snapshot-world.js';

/**
 * A start from the snapshot must continue exactly as a start from a full
 * replay of the logs: the same hooks after the restart, fed to both, give
 * byte-identical events and spans (ids and clock are deterministic here).
 * Both the graceful stop (snapshot at shutdown) and the crash (a periodic
 * snapshot, then more hooks, then no final save) are covered.
 */
const SESSIONS = 260;
const STEP = 150;

function history(nowMs: number) {
  return soakSchedule(SESSIONS, nowMs, 30 * 60_000, 60_000, STEP);
}

/** What comes after the restart: the cut sessions finish, new ones run, ended ones are finalized again, a late duplicate. */
function continuation(h: ReturnType<typeof history>): Envelope[] {
  const out: Envelope[] = [];
  for (const s of h.sessions) if (s.cutAt < s.hooks.length) out.push(...s.hooks.slice(s.cutAt));
  for (let i = SESSIONS; i < SESSIONS + 12; i++) out.push(...soakSession(soakSessionId(i), i).hooks);
  const ended = h.sessions.filter((s) => s.cutAt === s.hooks.length).slice(0, 6);
  for (const s of ended) {
    const env = (hook: string, extra: Record<string, unknown>, over: Partial<Envelope> = {}): Envelope => ({
      hook_event_name: hook,
      tool_name: null,
      tool_input: null,
      session_id: s.sid,
      cwd: '/home/dev/proj',
      ...over,
      extra: { telemetry_schema_version: SENTINEL, ...extra },
    });
    // a resumed session: a new turn, then finalized again (no second session.ended)
    const turn = `${s.sid}:task9:resumed0`;
    out.push(env('pre_llm_call', { turn_id: turn, user_message: 'again' }));
    out.push(env('pre_tool_call', { turn_id: turn, tool_call_id: 'call_again' }, { tool_name: 'terminal', tool_input: { command: 'ls' } }));
    out.push(env('post_tool_call', { turn_id: turn, tool_call_id: 'call_again', status: 'ok', result: 'r', duration_ms: 3 }, { tool_name: 'terminal' }));
    out.push(env('on_session_end', { turn_id: turn, completed: true, interrupted: false }));
    out.push(env('on_session_finalize', { reason: 'shutdown' }));
    // a repeated post of a tool that ended before the restart
    const post = s.hooks.find((x) => x.hook_event_name === 'post_tool_call')!;
    out.push(post);
  }
  return out;
}

/** The pairing state that matters, per session, whatever order the lanes are in. */
function laneView(w: World): unknown {
  const lanes = w.identity.saveLanes().map((l) => {
    const x = JSON.parse(laneText(l)) as Record<string, unknown>;
    delete x.lastSeen; // when the lane was last touched: bookkeeping, read by nothing
    // a live approval also knows its tool call; one rebuilt from the log pairs by key (the same card either way)
    x.approvals = (x.approvals as unknown[][]).map((c) => [c[0], c[1], c[2], c[4]]);
    return x;
  });
  return lanes.sort((a, b) => ((a.session as string) < (b.session as string) ? -1 : 1));
}

function mirrorView(w: World): unknown {
  const s = w.mirror!.saveState();
  const [traces, spans] = s.ctx;
  const deref = ([keys, values]: [string[], number[]]) => Object.fromEntries(keys.map((k, i) => [k, `${traces[values[i]!]}/${spans[values[i]!]}`]));
  return {
    units: s.units.map((u) => ({ ...u, ctx: `${traces[u.ctx]}/${spans[u.ctx]}` })).sort((a, b) => (a.key < b.key ? -1 : 1)),
    eventCtx: deref(s.eventCtx),
    lastRun: deref(s.lastRun),
    delegatedBy: deref(s.delegatedBy),
    sessionLast: Object.fromEntries(s.sessionLast[0].map((k, i) => [k, s.sessionLast[1][i]])),
    closed: [...s.closed].sort(),
  };
}

async function scenario(kind: 'sigterm' | 'kill9') {
  const now = Date.now();
  const h = history(now);
  const rootA = tempDir();
  let clock = now - 30 * 60_000;
  const a = await openWorld({ root: rootA, epoch: 0, idPrefix: 'A', now: () => clock });
  expect(a.restored.from).toBe('replay');
  const hookAt = (k: number) => h.timeline[k]!.t;
  const feedRange = (from: number, to: number) => {
    for (let k = from; k < to; k++) {
      const { s, k: j } = h.timeline[k]!;
      clock = hookAt(k);
      a.feed([h.sessions[s]!.hooks[j]!], () => hookAt(k));
    }
  };
  if (kind === 'sigterm') {
    feedRange(0, h.timeline.length);
    await a.close();
  } else {
    const cut = Math.floor(h.timeline.length * 0.7);
    feedRange(0, cut);
    expect(await a.snapshot.save('interval')).toBe(true);
    feedRange(cut, h.timeline.length);
    await a.crash();
  }
  // C: the same dirs without the snapshot (a full replay); B: the original dirs (their inodes are in the snapshot)
  const rootC = tempDir();
  cpSync(rootA, rootC, { recursive: true });
  rmSync(path.join(rootC, 'state', 'snapshot'));
  const after = now + 1_000;
  clock = after;
  const b = await openWorld({ root: rootA, epoch: 1, idPrefix: 'N', now: () => clock });
  const c = await openWorld({ root: rootC, epoch: 1, idPrefix: 'N', now: () => clock });
  return { h, a, b, c, after, rootA, setClock: (t: number) => (clock = t) };
}

describe('a start from the snapshot equals a start from a full replay', () => {
  for (const kind of ['sigterm', 'kill9'] as const) {
    it(`after ${kind === 'sigterm' ? 'a graceful stop (snapshot at shutdown)' : 'a crash (periodic snapshot + the log past it)'}`, async () => {
      const { h, a, b, c, after, setClock } = await scenario(kind);
      expect(b.restored.from).toBe('snapshot');
      expect(c.restored.from).toBe('replay');
      if (kind === 'kill9') expect(b.restored.replay.events).toBeGreaterThan(0);
      else expect(b.restored.replay.events).toBe(0);
      // far less read back than the full replay
      expect(b.restored.replay.events).toBeLessThan(c.restored.replay.events / 2);

      // the state itself
      expect(laneView(b)).toEqual(laneView(c));
      expect(mirrorView(b)).toEqual(mirrorView(c));

      // and what the same hooks become after the restart, byte for byte
      const rest = continuation(h);
      const at = (i: number) => after + 1_000 + i * STEP;
      setClock(at(0));
      b.feed(rest, at);
      c.feed(rest, at);
      const evB = b.events.map((e) => JSON.stringify(e));
      const evC = c.events.map((e) => JSON.stringify(e));
      expect(evB.length).toBeGreaterThan(100);
      expect(evB).toEqual(evC);
      // seq starts again at 0 in the new epoch, in every session, and only climbs
      const seqs = new Map<string, number[]>();
      for (const e of b.events) seqs.set(e.session, [...(seqs.get(e.session) ?? []), e.seq]);
      for (const s of seqs.values()) expect(s).toEqual(s.map((_, i) => i));
      expect(b.events.every((e) => e.epoch === 1)).toBe(true);

      const spB = (await b.spans()).map(spanJson);
      const spC = (await c.spans()).map(spanJson);
      expect(spB.length).toBeGreaterThan(50);
      expect(spB).toEqual(spC);

      // a run open across the restart ends as ONE root span, with its start from before the restart
      const cutTool = h.sessions.find((s) => s.hooks[s.cutAt]?.hook_event_name === 'post_tool_call' && s.hooks[s.cutAt]!.extra.tool_call_id === 'call_open')!;
      const turn = cutTool.hooks[s1(cutTool)]!.extra.turn_id as string;
      const started = a.events.find((e: AepEvent) => e.type === 'run.started' && e.run === turn)!;
      const roots = (await b.spans()).filter((s) => s.name === 'invoke_agent hermes' && s.attributes['aep.run_id'] === turn);
      expect(roots).toHaveLength(1);
      expect(roots[0]!.startTime[0] * 1000 + roots[0]!.startTime[1] / 1e6).toBe(Date.parse(started.time));
      expect(roots[0]!.attributes['aep.start_unknown']).toBeUndefined();
      // the tool open across the restart ended once, under that root
      const tool = (await b.spans()).filter((s) => s.attributes['gen_ai.tool.call.id'] === 'call_open' && s.attributes['aep.session_id'] === cutTool.sid);
      expect(tool).toHaveLength(1);
      expect(tool[0]!.parentSpanContext?.spanId).toBe(roots[0]!.spanContext().spanId);
      setClock(Date.now());
    });
  }
});

/** The index of the pre_llm_call of the turn a cut session stopped in. */
function s1(s: { hooks: Envelope[]; cutAt: number }): number {
  for (let i = s.cutAt - 1; i >= 0; i--) if (s.hooks[i]!.hook_event_name === 'pre_llm_call') return i;
  return 0;
}
