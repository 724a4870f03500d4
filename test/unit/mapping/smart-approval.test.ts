import { describe, expect, it } from 'vitest';
import { IdentityStage } from '../../../src/identity/identity-stage.js';
import { defaultPolicy } from '../../../src/capture/policy.js';
import { readHook } from '../../../src/mapping/map-hook.js';
import { hookEnvelopeSchema } from '../../../src/hermes/envelope.js';
import type { AepEvent } from '../../../src/aep/event.js';
import { aepValidator } from '../../support/aep-validator.js';
import { streamViolations, type Ev } from '../../support/stream-invariants.js';

/**
 * Hermes 0.19.0's smart approvals: the approval hooks also fire with
 * `surface: "smart"` around an auxiliary model's review of a flagged command
 * (tools/approval.py `_prepare_smart_approval_observer` /
 * `_observe_smart_approval_verdict`). No person is asked there, so no card.
 */
function session() {
  let n = 0;
  const s = new IdentityStage({ epoch: 1, host: 'h', policy: defaultPolicy(), newId: () => `id${++n}` });
  let tick = 0;
  const all: AepEvent[] = [];
  const feed = (hook: string, session: string, extra: Record<string, unknown> = {}, over: Record<string, unknown> = {}): AepEvent[] => {
    const env = hookEnvelopeSchema.parse({ hook_event_name: hook, session_id: session, tool_name: null, tool_input: null, cwd: '/', extra, ...over });
    const out = s.process(readHook(env, defaultPolicy()), new Date(Date.parse('2026-12-01T10:00:00Z') + 1000 * tick++));
    all.push(...out);
    return out;
  };
  const approval = {
    command: 'rm -rf /tmp/x',
    description: 'delete in root path',
    pattern_key: 'delete in root path',
    pattern_keys: ['delete in root path'],
    session_key: 'S',
    turn_id: 'S:t:1',
    tool_call_id: 'c1',
  };
  feed('on_session_start', 'S');
  feed('pre_llm_call', 'S', { turn_id: 'S:t:1' });
  const [requested] = feed('pre_tool_call', 'S', { turn_id: 'S:t:1', tool_call_id: 'c1' }, { tool_name: 'terminal', tool_input: { command: 'rm -rf /tmp/x' } });
  const smart = (hook: string, more: Record<string, unknown> = {}) => feed(hook, '', { ...approval, surface: 'smart', ...more });
  const cli = (hook: string, more: Record<string, unknown> = {}) => feed(hook, '', { ...approval, surface: 'cli', ...more });
  return { all, requested: requested!, smart, cli };
}

const sound = (events: AepEvent[]) => {
  const validate = aepValidator();
  for (const e of events) expect(validate(e), e.type).toEqual([]);
  expect(streamViolations(events as unknown as Ev[], { requireCauses: true })).toEqual([]);
};

describe('smart approvals (Hermes 0.19.0 surface "smart")', () => {
  it('the review is no card: x.hermes.approval.review.requested, caused by the tool call under review', () => {
    const { requested, smart } = session();
    const [review] = smart('pre_approval_request');
    expect(review).toMatchObject({ type: 'x.hermes.approval.review.requested', session: 'S', run: 'S:t:1', cause: requested.id, data: {} });
  });

  it('smart_approve: a guardrail verdict "allowed" by the auxiliary model, and no card at all', () => {
    const { all, requested, smart } = session();
    smart('pre_approval_request');
    const [verdict] = smart('post_approval_response', { choice: 'smart_approve', decided_by: 'aux_llm' });
    expect(verdict).toMatchObject({
      type: 'assessment.guardrail.recorded',
      cause: requested.id,
      data: { guardrail: { stage: 'input', verdict: 'allowed', categories: [{ name: 'delete in root path' }], detector: { name: 'aux_llm' } } },
    });
    expect(all.some((e) => e.type.startsWith('attention.'))).toBe(false);
    sound(all);
  });

  it('escalate (no smart post): the human card that follows pairs with its own answer', () => {
    const { all, smart, cli } = session();
    smart('pre_approval_request');
    const [card] = cli('pre_approval_request');
    const [answered] = cli('post_approval_response', { choice: 'deny' });
    expect(card).toMatchObject({ type: 'attention.requested', data: { kind: 'permission' } });
    expect(answered).toMatchObject({ type: 'attention.answered', subject: card!.id, data: { answer: { option: 'deny' }, via: 'oob' } });
    sound(all);
  });

  it('smart_deny: flagged (not blocked), then the owner overrides once on the human card', () => {
    const { all, smart, cli } = session();
    smart('pre_approval_request');
    const [verdict] = smart('post_approval_response', { choice: 'smart_deny', decided_by: 'aux_llm' });
    expect(verdict!.data).toMatchObject({ guardrail: { verdict: 'flagged' } });
    const [card] = cli('pre_approval_request');
    const [answered] = cli('post_approval_response', { choice: 'once' });
    expect(answered).toMatchObject({ subject: card!.id, data: { answer: { option: 'once' } } });
    sound(all);
  });

  it('an unknown smart choice records the review without a verdict', () => {
    const { smart } = session();
    const [verdict] = smart('post_approval_response', { choice: 'smart_maybe' });
    expect(verdict!.data).toEqual({ guardrail: { stage: 'input', categories: [{ name: 'delete in root path' }], detector: { name: 'aux_llm' } } });
  });
});
