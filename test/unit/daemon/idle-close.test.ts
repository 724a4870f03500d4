import { afterEach, describe, expect, it } from 'vitest';
import type { AepEvent } from '../../../src/aep/event.js';
import { IdleClose, WAITING_MAX_MS } from '../../../src/daemon/idle-close.js';
import { loadConfig } from '../../../src/config/config.js';
import { aepValidator } from '../../support/aep-validator.js';
import { inProcessDaemon } from '../../support/in-process-daemon.js';
import { IdentityStage } from '../../../src/identity/identity-stage.js';
import { historyJoins } from '../../../src/mapping/history-joins.js';
import { defaultPolicy } from '../../../src/capture/policy.js';

const IDLE_MS = 60_000;
const SENTINEL = 'hermes.observer.v1';
const T0 = Date.parse('2026-12-01T10:00:00.000Z');

/** One Hermes envelope of `session` (the shape the shim forwards). */
const env = (session: string, hook: string, extra: Record<string, unknown> = {}, tool?: { name: string; input: Record<string, unknown> }) => ({
  hook_event_name: hook,
  tool_name: tool?.name ?? null,
  tool_input: tool?.input ?? null,
  session_id: session,
  cwd: '/home/dev/proj',
  extra: { telemetry_schema_version: SENTINEL, ...extra },
});

/** The in-process daemon with one clock for the hook path and the idle close, moved by the test. */
function rig(idleMs = IDLE_MS) {
  let t = T0;
  const d = inProcessDaemon({ clock: () => new Date(t) });
  const idle = new IdleClose({
    idleMs,
    idleSessions: (cutoff, waitCutoff, max) => d.identity.idleSessions(cutoff, waitCutoff, max),
    held: () => false,
    end: (s) => d.pipeline.endIdle(s),
    now: () => t,
  });
  const hook = async (body: object) => {
    const r = await d.app.inject({ method: 'POST', url: '/hook', payload: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
    expect(r.statusCode).toBe(200);
  };
  /** a sweep, then every event it published written */
  const sweep = async () => {
    const n = idle.sweep();
    await idle.settled;
    return n;
  };
  rigs.push(d);
  return {
    d,
    idle,
    hook,
    sweep,
    at: (ms: number) => {
      t = T0 + ms;
    },
    events: (session: string): AepEvent[] => d.memory.events.filter((e) => e.session === session),
  };
}

const rigs: ReturnType<typeof inProcessDaemon>[] = [];
afterEach(async () => {
  for (const d of rigs.splice(0)) await d.app.close();
});

const ended = (evs: AepEvent[]) => evs.filter((e) => e.type === 'session.ended');

/** a `hermes -z` turn: the session starts, one turn runs and ends, and Hermes never finalizes */
async function oneShot(r: ReturnType<typeof rig>, s: string, opts: { endTurn: boolean } = { endTurn: true }) {
  const turn = `${s}:task1:aaaa1111`;
  await r.hook(env(s, 'on_session_start', { model: 'hermes-4', platform: 'cli' }));
  await r.hook(env(s, 'pre_llm_call', { turn_id: turn, task_id: 'task1', user_message: 'hi', model: 'hermes-4', platform: 'cli' }));
  await r.hook(env(s, 'pre_tool_call', { tool_call_id: 'c1', turn_id: turn, task_id: 'task1' }, { name: 'terminal', input: { command: 'ls' } }));
  await r.hook(env(s, 'post_tool_call', { tool_call_id: 'c1', turn_id: turn, task_id: 'task1', status: 'ok', result: '{}' }, { name: 'terminal', input: {} }));
  if (opts.endTurn) await r.hook(env(s, 'on_session_end', { turn_id: turn, task_id: 'task1', completed: true, interrupted: false }));
  return turn;
}

describe('a session Hermes stops speaking in is ended after AEP_SESSION_IDLE_S', () => {
  it('idle: one session.ended {reason: timeout} marked hermesendedby idle; an open run fails `idle` first; sessions_active back to 0', async () => {
    const r = rig();
    const turn = await oneShot(r, 's-killed', { endTurn: false });
    expect(r.d.identity.activeSessions).toBe(1);
    r.at(IDLE_MS); // silent exactly the idle time: not yet
    expect(await r.sweep()).toBe(0);
    r.at(IDLE_MS + 1);
    expect(await r.sweep()).toBe(1);
    const evs = r.events('s-killed');
    const end = ended(evs);
    expect(end).toHaveLength(1);
    expect(end[0]!.data).toEqual({ reason: 'timeout' });
    expect(end[0]!.hermesendedby).toBe('idle');
    expect(end[0]!.time).toBe(new Date(T0 + IDLE_MS + 1).toISOString());
    // the run Hermes left open: failed `idle`, paired with its start, before the end
    const started = evs.find((e) => e.type === 'run.started')!;
    const failed = evs.filter((e) => e.type === 'run.failed');
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ run: turn, cause: started.id, data: { reason: 'idle' } });
    expect(failed[0]!.seq).toBeLessThan(end[0]!.seq);
    expect(evs.at(-1)!.type).toBe('session.ended');
    expect(r.d.identity.activeSessions).toBe(0);
    const validate = aepValidator();
    expect(evs.flatMap((e) => validate(JSON.parse(JSON.stringify(e))))).toEqual([]);
    // a second sweep finds nothing more to end
    r.at(10 * IDLE_MS);
    expect(await r.sweep()).toBe(0);
    expect(ended(r.events('s-killed'))).toHaveLength(1);
    expect(r.idle.stats()).toMatchObject({ ended: 1 });
  });

  it('a finished one-shot turn: no run to fail, only the end', async () => {
    const r = rig();
    await oneShot(r, 's-oneshot');
    r.at(IDLE_MS + 1);
    expect(await r.sweep()).toBe(1);
    const evs = r.events('s-oneshot');
    expect(evs.filter((e) => e.type === 'run.failed')).toEqual([]);
    expect(evs.map((e) => e.type).slice(-2)).toEqual(['run.finished', 'session.ended']);
  });

  it('activity resets the idle clock: a hook late in the idle time keeps the session', async () => {
    const r = rig();
    await oneShot(r, 's-busy');
    r.at(IDLE_MS * 0.75);
    await r.hook(env('s-busy', 'pre_llm_call', { turn_id: 's-busy:task2:bbbb2222', task_id: 'task2', user_message: 'more' }));
    r.at(IDLE_MS * 1.5); // silent 0.75 of the idle time since the last hook
    expect(await r.sweep()).toBe(0);
    expect(ended(r.events('s-busy'))).toEqual([]);
    r.at(IDLE_MS * 1.75 + 1);
    expect(await r.sweep()).toBe(1);
    expect(ended(r.events('s-busy'))).toHaveLength(1);
  });

  it('a late hook after the idle close: its events stay (legal after an end), no second session.ended, not active again', async () => {
    const r = rig();
    await oneShot(r, 's-late');
    r.at(IDLE_MS + 1);
    await r.sweep();
    const before = r.events('s-late').length;
    r.at(IDLE_MS * 3);
    const turn = 's-late:task2:cccc3333';
    await r.hook(env('s-late', 'pre_llm_call', { turn_id: turn, task_id: 'task2', user_message: 'back' }));
    await r.hook(env('s-late', 'on_session_end', { turn_id: turn, task_id: 'task2', completed: true, interrupted: false }));
    const after = r
      .events('s-late')
      .slice(before)
      .map((e) => e.type);
    expect(after).toEqual(['run.started', 'run.finished']);
    expect(ended(r.events('s-late'))).toHaveLength(1);
    expect(r.d.identity.activeSessions).toBe(0);
    // and the sweep never ends it a second time
    r.at(IDLE_MS * 10);
    expect(await r.sweep()).toBe(0);
    expect(ended(r.events('s-late'))).toHaveLength(1);
  });

  it('on_session_finalize after the idle close: no second session.ended (counted a duplicate terminal)', async () => {
    const r = rig();
    await oneShot(r, 's-fin');
    r.at(IDLE_MS + 1);
    await r.sweep();
    const dup = r.d.identity.counters.duplicateTerminals;
    await r.hook(env('s-fin', 'on_session_finalize'));
    expect(ended(r.events('s-fin'))).toHaveLength(1);
    expect(ended(r.events('s-fin'))[0]!.hermesendedby).toBe('idle');
    expect(r.d.identity.counters.duplicateTerminals).toBe(dup + 1);
  });

  it('a session Hermes finalized itself is never idled out', async () => {
    const r = rig();
    await oneShot(r, 's-normal');
    await r.hook(env('s-normal', 'on_session_finalize'));
    r.at(IDLE_MS * 100);
    expect(await r.sweep()).toBe(0);
    expect(ended(r.events('s-normal')).map((e) => [e.data, e.hermesendedby])).toEqual([[{ reason: 'normal' }, undefined]]);
  });

  it('a card waiting on a person (a clarify question) holds the session open, up to a day of silence; then it is dismissed before the end', async () => {
    const r = rig();
    const s = 's-ask';
    const turn = await oneShot(r, s, { endTurn: false });
    await r.hook(
      env(
        s,
        'pre_tool_call',
        { tool_call_id: 'ask1', turn_id: turn, task_id: 'task1' },
        { name: 'clarify', input: { question: 'Which?', choices: ['a', 'b'] } },
      ),
    );
    const card = r.events(s).find((e) => e.type === 'attention.requested')!;
    expect(card).toBeDefined();
    r.at(IDLE_MS * 5);
    expect(await r.sweep()).toBe(0);
    r.at(WAITING_MAX_MS);
    expect(await r.sweep()).toBe(0);
    r.at(WAITING_MAX_MS + 1);
    expect(await r.sweep()).toBe(1);
    const evs = r.events(s);
    const dismissed = evs.find((e) => e.type === 'attention.resolved' && e.subject === card.id)!;
    expect(dismissed.data).toMatchObject({ resolution: 'dismissed' });
    const end = ended(evs)[0]!;
    expect(dismissed.seq).toBeLessThan(end.seq);
    expect(end.hermesendedby).toBe('idle');
  });

  it('a hook held on a gate card (a person asked) is passed over, counted', async () => {
    const r = rig();
    let held = true;
    const idle = new IdleClose({
      idleMs: IDLE_MS,
      idleSessions: (c, w, m) => r.d.identity.idleSessions(c, w, m),
      held: () => held,
      end: (s) => r.d.pipeline.endIdle(s),
      now: () => T0 + IDLE_MS + 1,
    });
    await oneShot(r, 's-gate');
    expect(idle.sweep()).toBe(0);
    expect(idle.stats()).toMatchObject({ ended: 0, deferred_held: 1 });
    held = false;
    expect(idle.sweep()).toBe(1);
  });

  it('0 disables it: no sweep ends anything, no timer is set', async () => {
    const r = rig(0);
    await oneShot(r, 's-never');
    r.at(365 * 24 * 3_600_000);
    r.idle.start();
    expect(await r.sweep()).toBe(0);
    expect(ended(r.events('s-never'))).toEqual([]);
    expect(r.d.identity.activeSessions).toBe(1);
    r.idle.stop();
  });

  it('the sweep interval is a quarter of the idle time, between 1 s and 60 s', () => {
    const every = (idleMs: number) => new IdleClose({ idleMs, idleSessions: () => [], held: () => false, end: () => undefined }).everyMs;
    expect([every(1_000), every(2_000), every(60_000), every(3_600_000)]).toEqual([1_000, 1_000, 15_000, 60_000]);
  });
});

describe('when a session was last heard from survives a restart', () => {
  it('replayed from the history: each event read back says when (its time); the restored session ends once silent long enough', async () => {
    const r = rig();
    await oneShot(r, 's-replayed');
    const last = Date.parse(r.events('s-replayed').at(-1)!.time);
    const fresh = new IdentityStage({ epoch: 9, host: 'h', policy: defaultPolicy({ home: '/home/dev' }), newId: () => 'x' });
    for (const ev of r.events('s-replayed')) fresh.restore(ev, historyJoins(ev));
    expect(fresh.idleSessions(last, last, 10)).toEqual([]);
    expect(fresh.idleSessions(last + 1, last + 1, 10)).toEqual(['s-replayed']);
  });

  it('from the snapshot: a saved lane keeps it, a lane never heard from is never idle', async () => {
    const r = rig();
    await oneShot(r, 's-saved');
    const saved = r.d.identity.saveLanes();
    expect(saved.find((l) => l.session === 's-saved')!.last).toBe(T0);
    const fresh = new IdentityStage({ epoch: 9, host: 'h', policy: defaultPolicy({ home: '/home/dev' }), newId: () => 'x' });
    fresh.loadLanes([...saved, { session: 's-unknown-time', ended: false, dormant: saved[0]!.dormant }].map((l) => ({ ...l })));
    expect(fresh.idleSessions(T0 + 1, T0 + 1, 10)).toEqual(['s-saved']);
  });
});

describe('AEP_SESSION_IDLE_S', () => {
  it('defaults to an hour, takes 0 (never) and refuses what is not a whole number of seconds', () => {
    expect(loadConfig({}).sessionIdleMs).toBe(3_600_000);
    expect(loadConfig({ AEP_SESSION_IDLE_S: '0' }).sessionIdleMs).toBe(0);
    expect(loadConfig({ AEP_SESSION_IDLE_S: '2' }).sessionIdleMs).toBe(2_000);
    expect(() => loadConfig({ AEP_SESSION_IDLE_S: '1h' })).toThrow(/AEP_SESSION_IDLE_S: a whole number from 0 to 2592000/);
  });
});
