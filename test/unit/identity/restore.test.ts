import { describe, expect, it } from 'vitest';
import { IdentityStage } from '../../../src/identity/identity-stage.js';
import { readHook } from '../../../src/mapping/map-hook.js';
import { historyJoins } from '../../../src/mapping/history-joins.js';
import { defaultPolicy } from '../../../src/capture/policy.js';
import { hookEnvelopeSchema } from '../../../src/hermes/envelope.js';
import type { AepEvent } from '../../../src/aep/event.js';
import { laneText } from '../../../src/identity/lane-state.js';

/**
 * A restart between a request and its outcome: the new process rebuilds its
 * lanes by applying the history, with the joins the mapper reads off each
 * event. These are the cases the two former copies of the state machine got
 * wrong, and the one the history cannot carry.
 */
const policy = defaultPolicy();
let n = 0;
const newStage = () => new IdentityStage({ epoch: 1, host: 'h', policy, newId: () => `id${++n}` });
const hook = (s: IdentityStage, name: string, extra: Record<string, unknown>, over: Record<string, unknown> = {}): AepEvent[] =>
  s.process(readHook(hookEnvelopeSchema.parse({ hook_event_name: name, session_id: 'S', extra, ...over }), policy), new Date(1000 * ++n));
const restart = (history: readonly AepEvent[]): IdentityStage => {
  const s = newStage();
  for (const ev of history) s.restore(ev, historyJoins(ev));
  return s;
};
const approval = (sessionKey: string, choice?: string) => ({
  pattern_key: 'rm_rf',
  session_key: sessionKey,
  surface: 'cli',
  tool_call_id: 'c1',
  ...(choice ? { choice } : {}),
});

describe('identity: a restart between a request and its outcome', () => {
  it('a clarify that raised no card (no question) still closes nothing after a restart', () => {
    const a = newStage();
    const before = hook(a, 'pre_tool_call', { tool_call_id: 'q1' }, { tool_name: 'clarify', tool_input: { question: '' } });
    expect(before.map((e) => e.type)).toEqual(['tool.requested']);
    const b = restart(before);
    const result = JSON.stringify({ question: '', choices_offered: [], user_response: 'fine' });
    const after = hook(b, 'post_tool_call', { tool_call_id: 'q1', status: 'ok', result }, { tool_name: 'clarify' });
    expect(after.map((e) => [e.type, e.cause])).toEqual([['tool.completed', before[0]!.id]]);
    expect(b.counters).toMatchObject({ suppressed: 1, unpairedTerminals: 0 });
  });

  it("an approval on its session's lane pairs with its card after a restart", () => {
    const a = newStage();
    const history = [...hook(a, 'pre_tool_call', { tool_call_id: 'c1' }, { tool_name: 'terminal' })];
    history.push(...hook(a, 'pre_approval_request', approval('S'), { session_id: '' }));
    const card = history[1]!;
    expect(card).toMatchObject({ type: 'attention.requested', session: 'S', cause: history[0]!.id });
    const b = restart(history);
    const after = hook(b, 'post_approval_response', approval('S', 'once'), { session_id: '' });
    expect(after.map((e) => [e.type, e.subject, e.cause])).toEqual([
      ['attention.answered', card.id, card.id],
      ['attention.resolved', card.id, after[0]!.id],
    ]);
  });

  it('a card on the unknown lane is not rebuilt (the history does not carry its session key): its outcome rides unpaired', () => {
    const a = newStage();
    const history = hook(a, 'pre_approval_request', approval('agent:main:telegram:dm:1'), { session_id: '' });
    expect(history[0]).toMatchObject({ type: 'attention.requested', session: 'unknown' });
    // without a restart, the gateway key pairs it
    expect(hook(a, 'post_approval_response', approval('agent:main:telegram:dm:1', 'deny'), { session_id: '' })[0]!.type).toBe('attention.answered');
    const b = restart(history);
    const lane = b.saveLanes().find((l) => l.session === 'unknown')!;
    expect((JSON.parse(laneText(lane)) as { approvals: unknown[] }).approvals).toEqual([]);
    const after = hook(b, 'post_approval_response', approval('agent:main:telegram:dm:1', 'deny'), { session_id: '' });
    expect(after.map((e) => e.type)).toEqual(['x.hermes.attention.unpaired']);
  });
});
