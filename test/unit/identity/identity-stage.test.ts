import { describe, expect, it } from 'vitest';
import { IdentityStage } from '../../../src/identity/identity-stage.js';
import { defaultPolicy } from '../../../src/capture/policy.js';
import { readHook } from '../../../src/mapping/map-hook.js';
import { hookEnvelopeSchema } from '../../../src/hermes/envelope.js';
import type { AepEvent } from '../../../src/aep/event.js';

function stage(maxSessions?: number) {
  let n = 0;
  const s = new IdentityStage({ epoch: 7, host: 'h', policy: defaultPolicy(), newId: () => `id${++n}`, maxSessions });
  const t0 = Date.parse('2026-11-29T10:00:00Z');
  let tick = 0;
  const feed = (hook: string, session: string, extra: Record<string, unknown> = {}, over: Record<string, unknown> = {}): AepEvent[] => {
    const env = hookEnvelopeSchema.parse({ hook_event_name: hook, session_id: session, tool_name: null, tool_input: null, cwd: '/', extra, ...over });
    return s.process(readHook(env, defaultPolicy()), new Date(t0 + 1000 * tick++));
  };
  return { s, feed };
}

describe('identity stage', () => {
  it('stamps the envelope: source, epoch, per-session seq from 0, capture per category', () => {
    const { feed } = stage();
    const [a] = feed('on_session_start', 'S/1');
    const [b] = feed('pre_llm_call', 'S/1', { turn_id: 'S/1:t:1', user_message: 'hi' });
    const [c] = feed('on_session_start', 'other');
    expect(a).toMatchObject({
      aep: '0.1',
      agent: 'hermes',
      session: 'S/1',
      seq: 0,
      epoch: 7,
      source: 'aep://h/agent/hermes/session/S%2F1',
      capture: 'metadata',
      severity: 'info',
    });
    expect(a).not.toHaveProperty('run');
    expect(b).toMatchObject({ seq: 1, run: 'S/1:t:1', time: '2026-11-29T10:00:01.000Z' });
    expect(c).toMatchObject({ seq: 0 });
  });

  it('at most one terminal per run, across duplicates; one session.ended per session', () => {
    const { s, feed } = stage();
    feed('pre_llm_call', 's', { turn_id: 't1' });
    expect(feed('pre_llm_call', 's', { turn_id: 't1' })).toEqual([]);
    expect(feed('on_session_end', 's', { turn_id: 't1', completed: true })).toHaveLength(1);
    expect(feed('on_session_end', 's', { turn_id: 't1', interrupted: true })).toEqual([]);
    expect(feed('on_session_finalize', 's')).toHaveLength(1);
    expect(feed('on_session_finalize', 's')).toEqual([]);
    expect(s.counters).toMatchObject({ duplicateStarts: 1, duplicateTerminals: 2 });
  });

  it('events after session.ended stay legal (late hooks), only a second end is dropped', () => {
    const { feed } = stage();
    feed('on_session_finalize', 's');
    expect(feed('pre_tool_call', 's', { tool_call_id: 'c', turn_id: 't' }, { tool_name: 'x' })).toHaveLength(1);
  });

  it('approval post pairs to pre by (session_key, pattern_key), tool_call_id breaking ties', () => {
    const { feed } = stage();
    feed('on_session_start', 's');
    const ask = (id: string) => feed('pre_approval_request', '', { session_key: 's', pattern_key: 'rm', tool_call_id: id, command: 'rm -rf x' })[0]!;
    const a = ask('c1');
    const b = ask('c2');
    const [answered, resolved] = feed('post_approval_response', '', { session_key: 's', pattern_key: 'rm', tool_call_id: 'c2', choice: 'deny' });
    expect(answered).toMatchObject({ session: 's', subject: b.id, cause: b.id, data: { answer: { option: 'deny' } } });
    expect(resolved).toMatchObject({ type: 'attention.resolved', subject: b.id, cause: answered!.id, data: { resolution: 'answered', latency_ms: 1000 } });
    const [timeout] = feed('post_approval_response', '', { session_key: 's', pattern_key: 'rm', choice: 'timeout' });
    expect(timeout).toMatchObject({ type: 'attention.timeout', subject: a.id, data: { after_ms: 3000 } });
  });

  it('an approval whose session_key matches no seen session rides the unknown lane and mints no session', () => {
    const { s, feed } = stage();
    const [ev] = feed('pre_approval_request', '', { session_key: 'agent:main:telegram:dm:42', pattern_key: 'rm' });
    expect(ev).toMatchObject({ session: 'unknown', seq: 0 });
    expect(s.activeSessions).toBe(0);
  });

  it('session.ended closes pending approval and clarify cards as dismissed first', () => {
    const { feed } = stage();
    feed('on_session_start', 's');
    const card = feed('pre_approval_request', '', { session_key: 's', pattern_key: 'rm' })[0]!;
    const [, form] = feed('pre_tool_call', 's', { tool_call_id: 'q', turn_id: 't' }, { tool_name: 'clarify', tool_input: { question: 'ok?' } });
    const out = feed('on_session_finalize', 's');
    expect(out.map((e) => [e.type, e.subject, e.data.resolution])).toEqual([
      ['attention.resolved', card.id, 'dismissed'],
      ['attention.resolved', form!.id, 'dismissed'],
      ['session.ended', undefined, undefined],
    ]);
  });

  it('subagent hooks land on the parent session and the parent turn', () => {
    const { feed } = stage();
    const [st] = feed('subagent_start', 'parent', { parent_turn_id: 'p:t:1', child_session_id: 'kid' });
    const [sp] = feed('subagent_stop', 'parent', { parent_turn_id: 'p:t:1', child_session_id: 'kid', child_status: 'completed' });
    expect(st).toMatchObject({ session: 'parent', run: 'p:t:1', subject: 'kid' });
    expect(sp).toMatchObject({ cause: st!.id });
  });

  it('an evicted session that comes back never reuses a seq in the same epoch', () => {
    const { s, feed } = stage(2);
    feed('on_session_start', 'a');
    feed('on_session_start', 'a');
    feed('on_session_start', 'b');
    feed('on_session_start', 'c'); // evicts a
    const [again] = feed('on_session_start', 'a');
    expect(again?.seq).toBe(2);
    expect(s.counters.evictions).toBeGreaterThan(0);
  });
});

describe('identity stage: the edges a review found', () => {
  it('an attention outcome whose request is unknown rides x.hermes.attention.unpaired, never a wrong subject', () => {
    const { s, feed } = stage();
    feed('on_session_start', 's');
    const [ev] = feed('post_approval_response', '', { session_key: 's', pattern_key: 'rm', choice: 'once' });
    expect(ev).toMatchObject({ type: 'x.hermes.attention.unpaired', subject: 'rm', data: { of: 'attention.answered', option: 'once' } });
    expect(s.counters.unpairedTerminals).toBe(1);
  });

  it('a clarify without a question raised no card, so its outcome closes nothing', () => {
    const { s, feed } = stage();
    feed('pre_tool_call', 's', { tool_call_id: 'q', turn_id: 't' }, { tool_name: 'clarify', tool_input: {} });
    const out = feed('post_tool_call', 's', { tool_call_id: 'q', turn_id: 't', status: 'blocked' }, { tool_name: 'clarify' });
    expect(out.map((e) => e.type)).toEqual(['tool.denied']);
    expect(s.counters.suppressed).toBe(1);
  });

  it("an approval answer naming a tool call never takes another call's card", () => {
    const { feed } = stage();
    feed('on_session_start', 's');
    const a = feed('pre_approval_request', '', { session_key: 's', pattern_key: 'rm', tool_call_id: 'c1' })[0]!;
    const [ev] = feed('post_approval_response', '', { session_key: 's', pattern_key: 'rm', tool_call_id: 'c9', choice: 'deny' });
    expect(ev?.type).toBe('x.hermes.attention.unpaired');
    const [ok] = feed('post_approval_response', '', { session_key: 's', pattern_key: 'rm', tool_call_id: 'c1', choice: 'once' });
    expect(ok).toMatchObject({ type: 'attention.answered', subject: a.id });
  });

  it('a repeated post_tool_call is not a second terminal', () => {
    const { s, feed } = stage();
    feed('pre_tool_call', 's', { tool_call_id: 'c', turn_id: 't' }, { tool_name: 'x' });
    expect(feed('post_tool_call', 's', { tool_call_id: 'c', turn_id: 't', status: 'ok' }, { tool_name: 'x' })).toHaveLength(1);
    expect(feed('post_tool_call', 's', { tool_call_id: 'c', turn_id: 't', status: 'error' }, { tool_name: 'x' })).toEqual([]);
    expect(s.counters.duplicateTerminals).toBe(1);
  });

  it('a resumed session finalized again: its new cards are dismissed, no second session.ended', () => {
    const { feed } = stage();
    feed('on_session_finalize', 's');
    feed('pre_tool_call', 's', { tool_call_id: 'q', turn_id: 't2' }, { tool_name: 'clarify', tool_input: { question: 'ok?' } });
    expect(feed('on_session_finalize', 's').map((e) => [e.type, e.data.resolution])).toEqual([['attention.resolved', 'dismissed']]);
  });

  it('an ended session stays ended after its lane is evicted (the persisted index)', () => {
    const endedSet = new Set<string>();
    let n = 0;
    const st = new IdentityStage({
      epoch: 0,
      host: 'h',
      policy: defaultPolicy(),
      newId: () => `i${++n}`,
      maxSessions: 1,
      ended: { has: (x) => endedSet.has(x), add: (x) => void endedSet.add(x) },
    });
    const go = (hook: string, session: string) => {
      const env = hookEnvelopeSchema.parse({ hook_event_name: hook, session_id: session, extra: {} });
      return st.process(readHook(env, defaultPolicy()), new Date(0));
    };
    expect(go('on_session_finalize', 'a')).toHaveLength(1);
    go('on_session_start', 'b'); // evicts a
    expect(go('on_session_finalize', 'a')).toEqual([]);
    expect(endedSet.has('a')).toBe(true);
  });
});

describe('identity stage: second-review edges', () => {
  it('with the lane table full, the lane being used is never the one evicted: no seq is reused', () => {
    const endedSet = new Set(['x']);
    let n = 0;
    const st = new IdentityStage({
      epoch: 0,
      host: 'h',
      policy: defaultPolicy(),
      newId: () => `i${++n}`,
      maxSessions: 3,
      ended: { has: (k) => endedSet.has(k), add: (k) => void endedSet.add(k) },
    });
    const go = (hook: string, session: string, extra: Record<string, unknown> = {}) => {
      const env = hookEnvelopeSchema.parse({ hook_event_name: hook, session_id: session, tool_name: 'x', extra });
      return st.process(readHook(env, defaultPolicy()), new Date(0));
    };
    for (const s of ['a', 'b', 'c']) go('on_session_start', s);
    const seqs = [
      ...go('pre_llm_call', 'x', { turn_id: 'x:t:1' }),
      ...go('pre_tool_call', 'x', { turn_id: 'x:t:1', tool_call_id: 'c1' }),
      ...go('post_tool_call', 'x', { turn_id: 'x:t:1', tool_call_id: 'c1', status: 'ok' }),
    ];
    expect(seqs.map((e) => e.seq)).toEqual([0, 1, 2]);
    expect(seqs[2]!.cause).toBe(seqs[1]!.id);
  });

  it('a reused tool_call_id is a new call: both terminals are emitted, each paired with its own request', () => {
    const { feed } = stage();
    const r1 = feed('pre_tool_call', 's', { tool_call_id: 'same', turn_id: 't' }, { tool_name: 'git' })[0]!;
    feed('post_tool_call', 's', { tool_call_id: 'same', turn_id: 't', status: 'ok' }, { tool_name: 'git' });
    const r2 = feed('pre_tool_call', 's', { tool_call_id: 'same', turn_id: 't' }, { tool_name: 'git' })[0]!;
    const [done] = feed('post_tool_call', 's', { tool_call_id: 'same', turn_id: 't', status: 'ok' }, { tool_name: 'git' });
    expect(done).toMatchObject({ type: 'tool.completed', cause: r2.id });
    expect(r2.id).not.toBe(r1.id);
  });

  it('restoring a session the index says ended keeps it ended', () => {
    const endedSet = new Set(['x']);
    let n = 0;
    const st = new IdentityStage({
      epoch: 1,
      host: 'h',
      policy: defaultPolicy(),
      newId: () => `i${++n}`,
      ended: { has: (k) => endedSet.has(k), add: (k) => void endedSet.add(k) },
    });
    st.restore(
      {
        aep: '0.1',
        id: 'old1',
        type: 'run.started',
        time: new Date(0).toISOString(),
        source: 's',
        agent: 'hermes',
        session: 'x',
        run: 'x:t:1',
        seq: 0,
        epoch: 0,
        severity: 'info',
        capture: 'metadata',
        data: {},
      },
      {},
    );
    const env = hookEnvelopeSchema.parse({ hook_event_name: 'on_session_finalize', session_id: 'x', extra: {} });
    expect(st.process(readHook(env, defaultPolicy()), new Date(1))).toEqual([]);
  });
});

describe('identity stage: the epoch settled after the history is read back', () => {
  it('enterEpoch before the first event stamps every event with it; once events carry one, it cannot change', () => {
    const { s, feed } = stage();
    s.enterEpoch(12);
    expect(s.epoch).toBe(12);
    expect(feed('on_session_start', 'e')[0]).toMatchObject({ epoch: 12, seq: 0 });
    expect(() => s.enterEpoch(13)).toThrow(/settled/);
    expect(feed('pre_llm_call', 'e', { turn_id: 'e:t:1', user_message: 'x' })[0]).toMatchObject({ epoch: 12, seq: 1 });
  });
});
