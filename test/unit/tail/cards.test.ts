// The cards tail follows: answerable ones only (respond_via lists control), the full id and the time left on
// the card line (at render time, rounded up, `expired` once past), how it ended on its first outcome line.
import { describe, expect, it } from 'vitest';
import { answerableCard, noteParts, PendingCards, timeLeft } from '../../../src/tail/cards.js';
import { colorStyler, plainStyler } from '../../../src/tail/color.js';
import { Printer } from '../../../src/tail/printer.js';
import { CARD, cardEvent, outcome } from '../../support/card-events.js';

const T0 = Date.parse('2026-07-03T10:00:00.000Z');

describe('answerable cards', () => {
  it('only attention.requested with control in respond_via is a card; observed ones (oob) and others are not', () => {
    expect(answerableCard(cardEvent())).toEqual({ id: CARD, expiresAt: Date.parse('2026-07-03T10:05:00.000Z') });
    expect(answerableCard(cardEvent(CARD, {}, { respond_via: ['oob'] }))).toBeUndefined();
    expect(answerableCard(cardEvent(CARD, {}, { respond_via: undefined }))).toBeUndefined();
    expect(answerableCard(cardEvent(CARD, { type: 'attention.answered' }))).toBeUndefined();
    expect(answerableCard(cardEvent(CARD, {}, { expires_at: 'soon' }))).toEqual({ id: CARD });
  });

  it('time left: whole seconds rounded up, then expired', () => {
    const c = { id: CARD, expiresAt: T0 + 42_000 };
    expect(timeLeft(c, T0)).toBe('42s left');
    expect(timeLeft(c, T0 + 41_001)).toBe('1s left');
    expect(timeLeft(c, T0 + 42_000)).toBe('expired');
    expect(timeLeft({ id: CARD }, T0)).toBeUndefined();
  });

  it('an outcome ends the card once: answered (its option), timed out, dismissed; other cards untouched', () => {
    const cards = new PendingCards();
    cards.observe(cardEvent('A'), T0);
    cards.observe(cardEvent('B'), T0);
    cards.observe(cardEvent('C'), T0);
    cards.observe(cardEvent('D'), T0);
    expect(cards.pending(T0).map((c) => c.id)).toEqual(['A', 'B', 'C', 'D']);
    expect(cards.observe(outcome('attention.answered', 'A', { answer: { option: 'deny', text: 'no' }, via: 'control' }), T0)).toEqual({
      kind: 'ended',
      how: 'answered: deny',
    });
    // the resolved that follows an answer is an ordinary line: the card is no longer pending
    expect(cards.observe(outcome('attention.resolved', 'A', { resolution: 'answered' }), T0)).toBeUndefined();
    expect(cards.observe(outcome('attention.timeout', 'B', { after_ms: 300_000 }), T0)).toEqual({ kind: 'ended', how: 'timed out' });
    expect(cards.observe(outcome('attention.resolved', 'C', { resolution: 'dismissed' }), T0)).toEqual({ kind: 'ended', how: 'dismissed' });
    expect(cards.observe(outcome('attention.answered', 'not-a-card'), T0)).toBeUndefined();
    expect(cards.pending(T0).map((c) => c.id)).toEqual(['D']);
  });

  it('an expired card stays listed (as expired) for the grace, then is forgotten; one long expired is never listed', () => {
    const cards = new PendingCards(60_000);
    const expires = Date.parse('2026-07-03T10:05:00.000Z');
    cards.observe(cardEvent('A'), T0);
    expect(cards.pending(expires + 1).map((c) => timeLeft(c, expires + 1))).toEqual(['expired']);
    expect(cards.pending(expires + 60_001)).toEqual([]);
    expect(cards.observe(cardEvent('B'), expires + 120_000)).toEqual({ kind: 'card', card: { id: 'B', expiresAt: expires } });
    expect(cards.pending(expires + 120_000)).toEqual([]);
  });

  it('the note parts: the full id and the time left; styled only when colors are on', () => {
    const note = { kind: 'card' as const, card: { id: CARD, expiresAt: T0 + 42_000 } };
    expect(noteParts(note, T0, plainStyler)).toEqual([`card=${CARD}`, '42s left']);
    expect(noteParts(note, T0 + 50_000, plainStyler)).toEqual([`card=${CARD}`, 'expired']);
    expect(noteParts({ kind: 'ended', how: 'timed out' }, T0, plainStyler)).toEqual(['→ timed out']);
    expect(noteParts(note, T0, colorStyler).join(' ')).toContain('\u001b[');
  });
});

describe('the card on its rendered line', () => {
  const printed = (events: Record<string, unknown>[], now: () => number, json = false) => {
    const out: string[] = [];
    const p = new Printer({ out: (l) => out.push(l), style: plainStyler, json, cards: new PendingCards(), now });
    for (const e of events) p.print(e, JSON.stringify(e));
    return out;
  };

  it('the card line ends with the full card id and its time left at render time; the outcome line says how it ended', () => {
    let now = Date.parse('2026-07-03T10:04:18.500Z');
    const out: string[] = [];
    const p = new Printer({ out: (l) => out.push(l), style: plainStyler, json: false, cards: new PendingCards(), now: () => now });
    const c = cardEvent();
    p.print(c, JSON.stringify(c));
    now += 5_000;
    const o = outcome('attention.answered', CARD, { answer: { option: 'deny' }, via: 'control' });
    p.print(o, JSON.stringify(o));
    expect(out[0]).toMatch(new RegExp(`attention\\.requested terminal kind=permission options=allow\\|deny card=${CARD} 42s left$`));
    expect(out[1]).toMatch(/attention\.answered …2Y4K3M option=deny via=control → answered: deny$/);
  });

  it('a card replayed after its expiry shows as expired', () => {
    const out = printed([cardEvent()], () => Date.parse('2026-07-03T10:06:00.000Z'));
    expect(out[0]).toMatch(/ card=01JZ5R7Q1B8N6T3X0V9W2Y4K3M expired$/);
  });

  it('an observed (oob) card gets no card note; --json lines are the event lines untouched', () => {
    const oob = cardEvent(CARD, {}, { respond_via: ['oob'] });
    expect(printed([oob], () => T0)[0]).not.toContain('card=');
    const c = cardEvent('01JZJSON000000000000000000');
    expect(printed([c], () => T0, true)).toEqual([JSON.stringify(c)]);
  });
});
