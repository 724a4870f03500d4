import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { IdentityStage } from '../../../src/identity/identity-stage.js';
import { defaultPolicy } from '../../../src/capture/policy.js';
import { readHook } from '../../../src/mapping/map-hook.js';
import { hookEnvelopeSchema } from '../../../src/hermes/envelope.js';
import type { AepEvent } from '../../../src/aep/event.js';
import { priceModelCalls, type PriceSource } from '../../../src/usage/price-step.js';
import { decodeLane, encodeLane } from '../../../src/identity/lane-state.js';
import { newLane } from '../../../src/identity/lanes.js';
import { apply } from '../../../src/identity/apply.js';
import type { Cost } from '../../../src/usage/pricer.js';

/** A fixed price list (USD per token): a model it does not list has no price. */
const PRICES: Record<string, number> = { 'priced-a': 0.001, 'priced-b': 0.002 };
const pricer: PriceSource = {
  price: ({ model, usage }): Cost | undefined => {
    const per = model !== undefined ? PRICES[model] : undefined;
    if (per === undefined) return undefined;
    const input = (usage['gen_ai.usage.input_tokens'] ?? 0) * per;
    const output = (usage['gen_ai.usage.output_tokens'] ?? 0) * per * 2;
    return { currency: 'USD', total: input + output, prompt: input, completion: output };
  },
};

const TURN = 'S:task:0001';
function rig() {
  let n = 0;
  const s = new IdentityStage({ epoch: 1, host: 'h', policy: defaultPolicy(), newId: () => `id${++n}`.padStart(6, '0') });
  const t0 = Date.parse('2026-11-29T10:00:00Z');
  let tick = 0;
  const feed = (hook: string, extra: Record<string, unknown> = {}): AepEvent[] => {
    const env = hookEnvelopeSchema.parse({ hook_event_name: hook, session_id: 'S', tool_name: null, tool_input: null, cwd: '/', extra });
    const now = new Date(t0 + 1000 * tick++);
    return s.process(priceModelCalls(readHook(env, defaultPolicy()), pricer, now), now);
  };
  const call = (model: string, n: number, input: number, output: number, turn = TURN) =>
    feed('post_api_request', {
      turn_id: turn,
      model,
      provider: 'custom',
      api_call_count: n,
      started_at: t0 / 1000 + n,
      ended_at: t0 / 1000 + n + 0.5,
      usage: { input_tokens: input, output_tokens: output, cache_read_tokens: 10, cache_write_tokens: 0, reasoning_tokens: 1 },
    });
  return { s, feed, call };
}

const dataOf = (evs: AepEvent[], type: string) => evs.find((e) => e.type === type)?.data;

describe("a run's terminal carries what its model calls add up to", () => {
  it('usage summed over the calls, and the cost when every call was priced', () => {
    const { feed, call } = rig();
    feed('pre_llm_call', { turn_id: TURN, user_message: 'hi' });
    const [c1] = call('priced-a', 1, 100, 20);
    call('priced-b', 2, 200, 30);
    // 110 input tokens × 0.001 + 20 output × 0.002
    expect(c1?.data).toMatchObject({ cost: { currency: 'USD', total: 0.15 } });
    const end = dataOf(feed('on_session_end', { turn_id: TURN, completed: true, interrupted: false }), 'run.finished');
    // input: (100 + 10 cache read) + (200 + 10); output 20 + 30; reasoning 1 + 1
    expect(end).toMatchObject({
      'gen_ai.usage.input_tokens': 320,
      'gen_ai.usage.output_tokens': 50,
      'gen_ai.usage.cache_read.input_tokens': 20,
      'gen_ai.usage.cache_creation.input_tokens': 0,
      'gen_ai.usage.reasoning.output_tokens': 2,
    });
    // 110*0.001 + 20*0.002 + 210*0.002 + 30*0.004 = 0.11 + 0.04 + 0.42 + 0.12
    expect(end?.cost).toEqual({ currency: 'USD', total: 0.69, prompt: 0.53, completion: 0.16 });
  });

  it('no cost at all when one call of the run had no price (a partial sum would understate it); usage still summed', () => {
    const { feed, call } = rig();
    feed('pre_llm_call', { turn_id: TURN, user_message: 'hi' });
    call('priced-a', 1, 100, 20);
    const [unknown] = call('not-in-the-list', 2, 50, 5);
    expect(unknown?.data).not.toHaveProperty('cost');
    const end = dataOf(feed('on_session_end', { turn_id: TURN, completed: false, interrupted: true }), 'run.cancelled');
    expect(end).not.toHaveProperty('cost');
    expect(end).toMatchObject({ 'gen_ai.usage.input_tokens': 170, 'gen_ai.usage.output_tokens': 25 });
  });

  it('a run without model calls carries neither; the next run starts from nothing', () => {
    const { feed, call } = rig();
    feed('pre_llm_call', { turn_id: TURN, user_message: 'hi' });
    call('priced-a', 1, 100, 20);
    feed('on_session_end', { turn_id: TURN, completed: true, interrupted: false });
    const next = 'S:task:0002';
    feed('pre_llm_call', { turn_id: next, user_message: 'again' });
    const end = dataOf(feed('on_session_end', { turn_id: next, completed: true, interrupted: false }), 'run.finished');
    expect(end).toEqual({});
  });

  it('a restart rebuilds the sum from the history (replayed events) and from a snapshot lane, exactly as live', () => {
    const live = rig();
    const history: AepEvent[] = [];
    history.push(...live.feed('pre_llm_call', { turn_id: TURN, user_message: 'hi' }));
    history.push(...live.call('priced-a', 1, 100, 20));
    history.push(...live.call('priced-b', 2, 200, 30));
    const liveEnd = dataOf(live.feed('on_session_end', { turn_id: TURN, completed: true, interrupted: false }), 'run.finished');

    // a new process, rebuilt from the history, gets the run's end
    const restored = rig();
    for (const ev of history) restored.s.restore(ev, {});
    const restoredEnd = dataOf(restored.feed('on_session_end', { turn_id: TURN, completed: true, interrupted: false }), 'run.finished');
    expect(restoredEnd).toEqual(liveEnd);

    // the same sum through a snapshot lane's JSON
    const lane = newLane('S');
    for (const ev of history) apply(lane, ev, {});
    const back = decodeLane(encodeLane(lane), 0, 'S');
    expect([...back.usage]).toEqual([...lane.usage]);
    // a lane written before model calls were summed (no `usage` member) still loads
    const old = JSON.parse(encodeLane(newLane('S'))) as Record<string, unknown>;
    delete old.usage;
    expect(decodeLane(JSON.stringify(old), 0, 'S').usage.size).toBe(0);
  });

  it('property: the terminal usage is the sum of the calls, the cost present iff every call was priced', () => {
    const callArb = fc.record({ model: fc.constantFrom('priced-a', 'priced-b', 'unknown'), input: fc.nat(1e6), output: fc.nat(1e5) });
    fc.assert(
      fc.property(fc.array(callArb, { minLength: 1, maxLength: 8 }), (calls) => {
        const { feed, call } = rig();
        feed('pre_llm_call', { turn_id: TURN, user_message: 'hi' });
        calls.forEach((c, i) => call(c.model, i + 1, c.input, c.output));
        const end = dataOf(feed('on_session_end', { turn_id: TURN, completed: true, interrupted: false }), 'run.finished')!;
        expect(end['gen_ai.usage.input_tokens']).toBe(calls.reduce((n, c) => n + c.input + 10, 0));
        expect(end['gen_ai.usage.output_tokens']).toBe(calls.reduce((n, c) => n + c.output, 0));
        expect('cost' in end).toBe(calls.every((c) => c.model !== 'unknown'));
      }),
      { numRuns: 60 },
    );
  });
});
