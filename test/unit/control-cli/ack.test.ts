// Ack matching (AEP-0004 §3, §4.2, §6): the command's own ack or refusal, the card's outcome; all else ignored.
import { describe, expect, it } from 'vitest';
import { ackText, classify, outcomeText } from '../../../src/control-cli/ack.js';

const CMD = '01JZCMD0000000000000000000';
const CARD = '01JZCARD000000000000000000';
const pending = { commandId: CMD, card: CARD };
const ev = (type: string, over: Record<string, unknown> = {}) =>
  JSON.stringify({
    aep: '0.1',
    id: `e-${type}-${Math.random()}`,
    type,
    time: '2026-07-03T10:00:00Z',
    source: 'aep://h/agent/hermes/session/s',
    agent: 'hermes',
    session: 's',
    seq: 4,
    ...over,
  });

describe('ack matching', () => {
  it('control.accepted whose cause is the command: accepted, the line kept as received', () => {
    const line = ev('control.accepted', { cause: CMD, data: {} });
    expect(classify(line, pending)).toEqual({ ack: { kind: 'accepted', line } });
  });

  it('control.rejected: its reason and detail', () => {
    const line = ev('control.rejected', { cause: CMD, data: { reason: 'refused', detail: 'the card expired' } });
    const v = classify(line, pending);
    expect(v).toEqual({ ack: { kind: 'rejected', reason: 'refused', detail: 'the card expired', line } });
    expect(ackText((v as any).ack)).toBe('rejected: refused (the card expired)');
    expect(ackText((classify(ev('control.rejected', { cause: CMD, data: { reason: 'busy' } }), pending) as any).ack)).toBe('rejected: busy');
  });

  it('an error frame whose cause is the command: refused with its code and detail', () => {
    const line = JSON.stringify({ type: 'error', cause: CMD, code: 'no-route', detail: 'no connected emitter claims this session' });
    const v = classify(line, pending);
    expect(v).toEqual({ ack: { kind: 'refused', code: 'no-route', detail: 'no connected emitter claims this session', line } });
    expect(ackText((v as any).ack)).toBe('refused: no-route (no connected emitter claims this session)');
  });

  it('unrelated frames and events are ignored', () => {
    const unrelated = [
      JSON.stringify({ type: 'error', cause: 'another-command', code: 'unsupported' }),
      JSON.stringify({ type: 'error', id: 'acks', code: 'invalid-filter' }),
      JSON.stringify({ type: 'error', code: 'invalid-frame' }),
      JSON.stringify({ type: 'ping', t: 1 }),
      ev('control.accepted', { cause: 'another-command' }),
      ev('control.rejected', { data: { reason: 'busy' } }),
      // the command itself, echoed back by a daemon that persists it
      ev('control.attention.respond', { id: CMD, subject: CARD, cause: CARD }),
      ev('attention.answered', { subject: 'another-card', data: { answer: { option: 'allow' } } }),
      ev('attention.requested', { id: 'x', subject: CARD }),
      ev('tool.requested', { cause: CMD }),
      'not json',
      '[1,2]',
      '{"type":7}',
    ];
    for (const u of unrelated) expect(classify(u, pending)).toBeUndefined();
  });

  it("without a card, a card's outcome is not looked for", () => {
    expect(classify(ev('attention.answered', { subject: CARD, data: { answer: { option: 'deny' } } }), { commandId: CMD })).toBeUndefined();
  });

  it('the outcomes: answered (with the text), timeout, dismissed', () => {
    const answered = classify(ev('attention.answered', { subject: CARD, data: { answer: { option: 'deny', text: 'not on prod' }, via: 'control' } }), pending);
    expect(outcomeText((answered as any).outcome)).toBe('answered: deny "not on prod"');
    expect(outcomeText((classify(ev('attention.answered', { subject: CARD, data: { answer: { option: 'allow' } } }), pending) as any).outcome)).toBe(
      'answered: allow',
    );
    expect(outcomeText((classify(ev('attention.timeout', { subject: CARD, data: { after_ms: 300_000 } }), pending) as any).outcome)).toBe(
      'timed out after 300s',
    );
    expect(outcomeText((classify(ev('attention.resolved', { subject: CARD, data: { resolution: 'dismissed' } }), pending) as any).outcome)).toBe('dismissed');
    expect(outcomeText((classify(ev('attention.resolved', { subject: CARD, data: { resolution: 'auto' } }), pending) as any).outcome)).toBe('resolved: auto');
  });

  it('terminal control characters in a detail are made visible, never passed to the terminal', () => {
    const line = JSON.stringify({ type: 'error', cause: CMD, code: 'unsupported', detail: 'evil\u001b[2J' });
    expect(ackText((classify(line, pending) as any).ack)).toBe('refused: unsupported (evil\\u001b[2J)');
  });
});
