import { describe, expect, it } from 'vitest';
import { IdentityStage } from '../../../src/identity/identity-stage.js';
import { defaultPolicy } from '../../../src/capture/policy.js';
import { readHook } from '../../../src/mapping/map-hook.js';
import { rotatedFrom } from '../../../src/mapping/hook-keys.js';
import { hookEnvelopeSchema } from '../../../src/hermes/envelope.js';
import type { AepEvent } from '../../../src/aep/event.js';

/**
 * Issue 25 item 4: Hermes rotates the session id on context compression and no
 * released hook says so (research note §6). A hook whose `session_id` is not
 * the session its `turn_id` began in opens its session once, with that
 * lineage as `session.started.data.parent` (AEP-0002).
 */
const OLD = '20260915_101500_c0ffee';
const NEW = '20260915_103000_beef01';
const TURN = `${OLD}:7a1d2c3e-4b5f-4a6b-8c7d-9e0f1a2b3c4d:5e6f7a8b`;

function rig() {
  let n = 0;
  const s = new IdentityStage({ epoch: 1, host: 'h', policy: defaultPolicy(), newId: () => `id${++n}`.padStart(6, '0') });
  const out: AepEvent[] = [];
  const feed = (hook: string, session: string, extra: Record<string, unknown> = {}) => {
    const env = hookEnvelopeSchema.parse({ hook_event_name: hook, session_id: session, tool_name: null, tool_input: null, cwd: '/', extra });
    out.push(...s.process(readHook(env, defaultPolicy()), new Date(Date.parse('2026-09-15T10:15:00Z') + 1000 * n)));
  };
  return { feed, out };
}

describe('a session id rotated inside a turn (compression)', () => {
  it("opens the new session once, naming the turn's session and the turn as its parent", () => {
    const { feed, out } = rig();
    feed('on_session_start', OLD);
    feed('pre_llm_call', OLD, { turn_id: TURN, user_message: 'hi' });
    feed('post_api_request', NEW, { turn_id: TURN, api_call_count: 2, model: 'm', usage: { input_tokens: 5, output_tokens: 1 } });
    feed('post_api_request', NEW, { turn_id: TURN, api_call_count: 3, model: 'm', usage: { input_tokens: 5, output_tokens: 1 } });
    feed('on_session_end', NEW, { turn_id: TURN, completed: true, interrupted: false });
    const opened = out.filter((e) => e.type === 'session.started');
    expect(opened.map((e) => e.session)).toEqual([OLD, NEW]);
    expect(opened[1]!.data).toEqual({ client: { name: 'hermes' }, parent: { session: OLD, run: TURN } });
    // it comes first on its lane
    expect(out.find((e) => e.session === NEW)!.type).toBe('session.started');
  });

  it('a turn of the session it began in, and a turn id not of the vendor shape, open nothing', () => {
    const { feed, out } = rig();
    feed('pre_llm_call', OLD, { turn_id: TURN, user_message: 'hi' });
    feed('post_api_request', OLD, { turn_id: TURN, api_call_count: 1 });
    feed('post_api_request', NEW, { turn_id: 'opaque-turn', api_call_count: 1 });
    expect(out.filter((e) => e.type === 'session.started')).toEqual([]);
    expect(rotatedFrom('a:b', 'a:b:task:uuid')).toBeUndefined();
    expect(rotatedFrom('c', 'a:b:task:uuid')).toBe('a:b');
    expect(rotatedFrom(undefined, TURN)).toBeUndefined();
  });
});
