import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { monotonicFactory } from 'ulid';
import { hookEnvelopeSchema, TELEMETRY_SCHEMA_VERSION } from '../../../src/hermes/envelope.js';
import { readHook } from '../../../src/mapping/map-hook.js';
import { defaultPolicy } from '../../../src/capture/policy.js';
import { IdentityStage } from '../../../src/identity/identity-stage.js';
import type { AepEvent } from '../../../src/aep/event.js';
import { aepValidator } from '../../support/aep-validator.js';
import { ROOT } from '../../support/paths.js';
import { streamViolations, type Ev } from '../../support/stream-invariants.js';

/**
 * The mapping over envelopes the REAL Hermes sent, one recorded set per
 * release the e2e tier runs (fixtures/hermes-recorded for 0.18.2,
 * fixtures/hermes-recorded-<version> after it): every event schema-valid, the
 * stream sound, and the places where the live payloads differ from the design
 * record, or from the previous release (docs/hermes-drift.md), handled
 * honestly.
 */
const SETS = [
  { version: '0.18.2', dir: path.join(ROOT, 'fixtures', 'hermes-recorded', 'raw') },
  { version: '0.19.0', dir: path.join(ROOT, 'fixtures', 'hermes-recorded-0.19.0', 'raw') },
] as const;
const validate = aepValidator();

function playIn(dir: string, file: string): { envelopes: any[]; events: AepEvent[]; dropped: number } {
  const envelopes = readFileSync(path.join(dir, file), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  const ulid = monotonicFactory();
  const policy = defaultPolicy({ home: '/home/user' });
  const stage = new IdentityStage({ epoch: 0, host: 'h', policy, newId: () => ulid() });
  let t = Date.parse('2026-11-29T19:00:00Z');
  const events = envelopes.flatMap((raw) => {
    const env = hookEnvelopeSchema.parse(raw);
    return stage.process(readHook(env, policy), new Date((t += 1000)));
  });
  return { envelopes, events, dropped: stage.counters.duplicateTerminals + stage.counters.duplicateStarts };
}

const bySession = (events: AepEvent[]) => {
  const m = new Map<string, Ev[]>();
  for (const e of events) m.set(e.session, [...(m.get(e.session) ?? []), e]);
  return m;
};

describe.each(SETS)('recorded Hermes $version sessions', ({ version, dir }) => {
  const scenarios = readdirSync(dir)
    .filter((f) => f.endsWith('.jsonl'))
    .sort();
  const play = (file: string) => playIn(dir, file);

  it('has the recorded scenarios', () => {
    expect(scenarios.length).toBeGreaterThanOrEqual(20);
  });

  it.each(scenarios)('%s: every event schema-valid, every lane sound', (file) => {
    const { envelopes, events, dropped } = play(file);
    // every envelope is mapped; only a duplicate start or terminal is held back
    expect(events.length + dropped).toBeGreaterThanOrEqual(envelopes.length);
    for (const e of events) expect(validate(e), `${e.type}`).toEqual([]);
    for (const lane of bySession(events).values()) expect(streamViolations(lane, { requireCauses: false })).toEqual([]);
    const live = !file.startsWith('cli-hooks-');
    // the drift sentinel rides every live payload; Hermes's own `hooks test|doctor` payloads lack it
    for (const env of envelopes) expect(env.extra?.telemetry_schema_version === TELEMETRY_SCHEMA_VERSION).toBe(live);
  });

  const types = (file: string) => play(file).events.map((e) => e.type);

  it('runs are the real turn ids; one per turn', () => {
    const { envelopes, events } = play('chat-q-multiturn-resume.jsonl');
    const turns = [...new Set(envelopes.filter((e) => e.hook_event_name === 'pre_llm_call').map((e) => e.extra.turn_id))];
    expect(turns.length).toBe(2);
    expect(events.filter((e) => e.type === 'run.started').map((e) => e.run)).toEqual(turns);
  });

  it('a session finalized by two processes (chat -q, then --resume) ends once', () => {
    expect(types('chat-q-multiturn-resume.jsonl').filter((t) => t === 'session.ended')).toHaveLength(1);
  });

  it('oneshot clarify: the agent answered itself, so no human answer is claimed', () => {
    for (const f of ['oneshot-clarify-choices.jsonl', 'oneshot-clarify-open.jsonl']) {
      const ev = play(f).events;
      expect(ev.filter((e) => e.type === 'attention.answered')).toEqual([]);
      expect(ev.find((e) => e.type === 'attention.resolved')?.data).toEqual({ resolution: 'auto' });
    }
  });

  it('interactive clarify: picked choices are structural ids, the Other text is redacted-gated', () => {
    const answers = play('tty-clarify.jsonl')
      .events.filter((e) => e.type === 'attention.answered')
      .map((e) => e.data.answer);
    expect(answers).toEqual([{ values: { '1': '2' } }, { values: { '1': 'teal, please' } }, { values: { '1': 'Ada' } }]);
  });

  it('the CLI clarify timeout is a timeout, not an answer', () => {
    const ev = play('tty-clarify-timeout.jsonl').events;
    expect(ev.some((e) => e.type === 'attention.timeout')).toBe(true);
    expect(ev.some((e) => e.type === 'attention.answered')).toBe(false);
  });

  it('approvals: joined to the session by session_key, caused by their tool call, answered via oob', () => {
    const ev = play('tty-approval-once.jsonl').events;
    const card = ev.find((e) => e.type === 'attention.requested')!;
    expect(card.session).not.toBe('unknown');
    expect(ev.find((e) => e.id === card.cause)?.type).toBe('tool.requested');
    expect(ev.find((e) => e.type === 'attention.answered')).toMatchObject({ subject: card.id, data: { answer: { option: 'once' }, via: 'oob' } });
  });

  it('a user-denied command: the tool fails (Hermes reports status error), the card carries the denial', () => {
    const ev = play('tty-approval-deny-new-exit.jsonl').events;
    expect(ev.find((e) => e.type === 'attention.answered')?.data).toMatchObject({ answer: { option: 'deny' } });
    expect(ev.find((e) => e.type === 'tool.failed')?.data).toMatchObject({ error: { type: 'tool_error' } });
  });

  it('/new: the old session ends, the successor gets x.hermes.session.reset and its own end', () => {
    const lanes = bySession(play('tty-approval-deny-new-exit.jsonl').events);
    const ended = [...lanes.values()].filter((l) => l.some((e) => e.type === 'session.ended'));
    expect(ended.length).toBe(2);
    expect([...lanes.values()].some((l) => l[0]?.type === 'x.hermes.session.reset')).toBe(true);
  });

  it('Ctrl-C (completed AND interrupted) is a cancellation', () => {
    expect(types('tty-interrupt.jsonl')).toContain('run.cancelled');
  });

  it('a failed API call leaves its run open (Hermes fires no on_session_end): no invented terminal', () => {
    const ev = play('oneshot-api-error-500.jsonl').events;
    expect(ev.filter((e) => e.type === 'x.hermes.api.error')).toHaveLength(3);
    expect(ev.some((e) => e.type.startsWith('run.') && e.type !== 'run.started')).toBe(false);
  });

  it('oneshot mode never finalizes: no session.ended is invented', () => {
    expect(types('oneshot-terminal.jsonl')).not.toContain('session.ended');
  });

  it('a hook block is tool.denied by policy', () => {
    expect(play('oneshot-blocked-by-hook.jsonl').events.find((e) => e.type === 'tool.denied')?.data).toMatchObject({ by: 'policy' });
  });

  it('every person-facing approval card closes with its own answer (0.19.0 reviews each by model first: no card)', () => {
    for (const f of ['tty-approval-once.jsonl', 'tty-approval-deny-new-exit.jsonl', 'tty-approval-timeout.jsonl']) {
      const ev = play(f).events;
      expect(
        ev.filter((e) => e.type === 'attention.resolved' && e.data.resolution === 'dismissed'),
        f,
      ).toEqual([]);
      expect(
        ev.filter((e) => e.type === 'attention.requested'),
        f,
      ).toHaveLength(1);
      expect(
        ev.filter((e) => e.type === 'x.hermes.approval.review.requested'),
        f,
      ).toHaveLength(version === '0.19.0' ? 1 : 0);
    }
  });

  it('smart approvals (0.19.0): the model approves with no card; its deny is flagged and the owner overrides once', () => {
    const smart = scenarios.filter((f) => f.startsWith('tty-approval-smart-'));
    if (version === '0.18.2') {
      expect(smart).toEqual([]);
      return;
    }
    expect(smart).toEqual(['tty-approval-smart-approve.jsonl', 'tty-approval-smart-deny-override-once.jsonl']);
    const approved = play('tty-approval-smart-approve.jsonl').events;
    expect(approved.some((e) => e.type.startsWith('attention.'))).toBe(false);
    const verdict = approved.find((e) => e.type === 'assessment.guardrail.recorded')!;
    expect(verdict.data).toMatchObject({ guardrail: { verdict: 'allowed', detector: { name: 'aux_llm' } } });
    expect(approved.find((e) => e.id === verdict.cause)?.type).toBe('tool.requested');
    const denied = play('tty-approval-smart-deny-override-once.jsonl').events;
    expect(denied.find((e) => e.type === 'assessment.guardrail.recorded')?.data).toMatchObject({ guardrail: { verdict: 'flagged' } });
    const card = denied.find((e) => e.type === 'attention.requested')!;
    expect(denied.find((e) => e.type === 'attention.answered')).toMatchObject({ subject: card.id, data: { answer: { option: 'once' } } });
    expect(denied.some((e) => e.type === 'tool.completed')).toBe(true);
  });

  it('oneshot delegation: 0.18.2 runs the child in the background (its stop comes late), 0.19.0 inline (inside the call)', () => {
    const ev = play('oneshot-subagent-slow-parent.jsonl').events;
    const stopped = ev.findIndex((e) => e.type === 'delegation.subagent.stopped');
    const returned = ev.findIndex((e) => e.type === 'tool.completed' && (e.data.tool as { name?: string }).name === 'delegate_task');
    expect(stopped).toBeGreaterThanOrEqual(0);
    if (version === '0.19.0') expect(stopped).toBeLessThan(returned);
    else expect(stopped).toBeGreaterThan(returned);
  });
});
