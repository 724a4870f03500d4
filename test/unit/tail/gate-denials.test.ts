// Which tool.denied is the operator's: the chain card (cause: the tool.requested) → answered deny (subject: the
// card) → tool.denied (cause: the same tool.requested). The reason only when the answer's capture admits text.
import { describe, expect, it } from 'vitest';
import { GateDenials } from '../../../src/tail/gate-denials.js';

const card = (id: string, cause: string, via = ['control']) => ({
  type: 'attention.requested',
  id,
  cause,
  data: { kind: 'permission', options: [{ id: 'allow' }, { id: 'deny' }], respond_via: via },
});
const answered = (card: string, option: string, capture: string, text?: string) => ({
  type: 'attention.answered',
  id: `A-${card}`,
  subject: card,
  capture,
  data: { answer: { option, ...(text !== undefined ? { text } : {}) }, via: 'control' },
});
const denied = (cause: string) => ({ type: 'tool.denied', id: `D-${cause}`, cause, data: { tool: { name: 'terminal' }, by: 'policy' } });

describe('GateDenials', () => {
  it('a deny on the gate card of the same call: the operator, with the reason at redacted', () => {
    const g = new GateDenials();
    for (const e of [card('C1', 'R1'), answered('C1', 'deny', 'redacted', 'not on prod')]) expect(g.observe(e)).toBeUndefined();
    expect(g.observe(denied('R1'))).toEqual({ reason: 'not on prod' });
  });

  it('the reason is left out when the answer is captured at metadata', () => {
    const g = new GateDenials();
    g.observe(card('C1', 'R1'));
    g.observe(answered('C1', 'deny', 'metadata', 'not on prod'));
    expect(g.observe(denied('R1'))).toEqual({});
  });

  it('not the operator: another call, an allowed card, an observed-only (oob) card, no card at all', () => {
    const g = new GateDenials();
    g.observe(card('C1', 'R1'));
    g.observe(answered('C1', 'deny', 'redacted'));
    expect(g.observe(denied('R9'))).toBeUndefined();
    g.observe(card('C2', 'R2'));
    g.observe(answered('C2', 'allow', 'redacted'));
    expect(g.observe(denied('R2'))).toBeUndefined();
    g.observe(card('C3', 'R3', ['oob']));
    g.observe(answered('C3', 'deny', 'redacted'));
    expect(g.observe(denied('R3'))).toBeUndefined();
    expect(g.observe(denied('R4'))).toBeUndefined();
  });
});
