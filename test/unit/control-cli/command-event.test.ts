// The command Events (AEP-0001 §5, AEP-0004 §2): what `answer` and `instruct` put on the wire, checked by the
// project's own envelope validator (the one the daemon runs on every event it is sent).
import { describe, expect, it } from 'vitest';
import { CLI_AGENT, instructCommand, respondCommand } from '../../../src/control-cli/command-event.js';
import { checkEnvelope } from '../../../src/stream/envelope-check.js';

const ctx = { host: 'dev-box', newId: () => '01JZ5R7Q1B8N6T3X0V9W2Y4K3M', now: () => new Date('2026-07-03T10:15:04.221Z') };
const CARD = '01JZ5R7Q1B8N6T3X0V9W2Y4K00';

describe('command events', () => {
  it('control.attention.respond: subject and cause name the card, no seq, notice, metadata without text', () => {
    const c = respondCommand(CARD, '20261201_015107_962745', { option: 'allow' }, ctx);
    expect(c.event).toEqual({
      aep: '0.1',
      id: '01JZ5R7Q1B8N6T3X0V9W2Y4K3M',
      type: 'control.attention.respond',
      time: '2026-07-03T10:15:04.221Z',
      source: 'aep://dev-box/agent/hermes-aep-cli/session/20261201_015107_962745',
      agent: CLI_AGENT,
      session: '20261201_015107_962745',
      subject: CARD,
      cause: CARD,
      severity: 'notice',
      capture: 'metadata',
      data: { answer: { option: 'allow' } },
    });
    expect(c.line).toBe(JSON.stringify(c.event));
    expect(c.event).not.toHaveProperty('seq');
    const checked = checkEnvelope(JSON.parse(c.line), c.line);
    expect(checked.ok).toBe(true);
  });

  it('a deny with a reason carries it as answer.text and claims capture full', () => {
    const c = respondCommand(CARD, 's1', { option: 'deny', text: 'not on prod' }, ctx);
    expect(c.event['data']).toEqual({ answer: { option: 'deny', text: 'not on prod' } });
    expect(c.event['capture']).toBe('full');
    expect(checkEnvelope(JSON.parse(c.line), c.line).ok).toBe(true);
  });

  it('x.hermes.control.instruct: the text, capture full; a session with URI-hostile characters still makes a valid source', () => {
    const session = 'weird session/with?#chars:ü';
    const c = instructCommand(session, 'run the tests first', ctx);
    expect(c.event).toMatchObject({ type: 'x.hermes.control.instruct', session, capture: 'full', severity: 'notice', data: { text: 'run the tests first' } });
    expect(c.event['source']).toBe(`aep://dev-box/agent/hermes-aep-cli/session/${encodeURIComponent(session)}`);
    expect(c.event).not.toHaveProperty('seq');
    expect(c.event).not.toHaveProperty('subject');
    const checked = checkEnvelope(JSON.parse(c.line), c.line);
    expect(checked).toMatchObject({ ok: true });
  });

  it('every command gets a fresh ULID id by default', () => {
    const a = instructCommand('s1', 'x', { host: 'h' });
    const b = instructCommand('s1', 'x', { host: 'h' });
    expect(a.id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(a.id).not.toBe(b.id);
    expect(Date.parse(String(a.event['time']))).not.toBeNaN();
  });

  it('the validator would refuse a command carrying seq (the AEP-0004 §2.2 carve-out is enforced, so the test above means something)', () => {
    const c = instructCommand('s1', 'x', ctx);
    const withSeq = { ...JSON.parse(c.line), seq: 1 };
    expect(checkEnvelope(withSeq, JSON.stringify(withSeq)).ok).toBe(false);
  });
});
