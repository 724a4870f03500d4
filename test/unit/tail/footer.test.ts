// The pending-cards footer: drawn under the lines while answerable cards wait, with their full ids and time
// left, refreshed about once a second (fake timers: no sleeping), cleared when the last one ends, cut to the
// terminal width, and styled like everything else (NO_COLOR leaves only the erase-line control).
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PendingCards } from '../../../src/tail/cards.js';
import { colorStyler, plainStyler, type Styler } from '../../../src/tail/color.js';
import { ERASE, Footer } from '../../../src/tail/footer.js';
import { Printer } from '../../../src/tail/printer.js';
import { CARD, cardEvent, outcome } from '../../support/card-events.js';

// eslint-disable-next-line no-control-regex
const SGR = /\u001b\[[0-9;]*m/;

function rig(style: Styler = plainStyler, columns: number | undefined = 120) {
  const screen: string[] = [];
  const cards = new PendingCards();
  const footer = new Footer({ write: (t) => screen.push(t), columns: () => columns }, cards, style, () => Date.now(), 1_000);
  const lines: string[] = [];
  const printer = new Printer({ out: (l) => footer.print((x) => (lines.push(x), screen.push(`${x}\n`)), l), style, json: false, cards, now: () => Date.now() });
  const print = (e: Record<string, unknown>) => printer.print(e, JSON.stringify(e));
  return { screen, footer, print, lines };
}

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(Date.parse('2026-07-03T10:04:18.000Z')); // the card expires at 10:05:00Z: 42 s left
});
afterEach(() => {
  vi.useRealTimers();
});

describe('the pending-cards footer', () => {
  it('nothing pending: the lines alone, not one control byte', () => {
    const r = rig();
    r.print(outcome('tool.requested', 'x'));
    expect(r.screen).toEqual([`${r.lines[0]}\n`]);
    vi.advanceTimersByTime(5_000);
    expect(r.screen).toHaveLength(1);
  });

  it('a card: drawn under its line, erased before the next line and drawn again; refreshed each second', () => {
    const r = rig();
    r.print(cardEvent());
    expect(r.screen).toEqual([`${r.lines[0]}\n`, `${ERASE}1 pending: ${CARD} 42s left`]);
    r.print(outcome('tool.requested', 'x'));
    expect(r.screen.slice(2)).toEqual([ERASE, `${r.lines[1]}\n`, `${ERASE}1 pending: ${CARD} 42s left`]);
    vi.advanceTimersByTime(1_000);
    expect(r.screen.at(-1)).toBe(`${ERASE}1 pending: ${CARD} 41s left`);
    vi.advanceTimersByTime(10_000);
    expect(r.screen.at(-1)).toBe(`${ERASE}1 pending: ${CARD} 31s left`);
  });

  it('past expires_at with no outcome: listed as expired', () => {
    const r = rig();
    r.print(cardEvent());
    vi.advanceTimersByTime(43_000);
    expect(r.screen.at(-1)).toBe(`${ERASE}1 pending: ${CARD} expired`);
  });

  it('the outcome clears it and the refresh stops', () => {
    const r = rig();
    r.print(cardEvent());
    r.print(outcome('attention.answered', CARD, { answer: { option: 'allow' }, via: 'control' }));
    expect(r.lines[1]).toMatch(/→ answered: allow$/);
    expect(r.screen.slice(2)).toEqual([ERASE, `${r.lines[1]}\n`]);
    const n = r.screen.length;
    vi.advanceTimersByTime(10_000);
    expect(r.screen).toHaveLength(n);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('several cards, oldest first; what does not fit the width is counted, never wrapped', () => {
    const r = rig(plainStyler, 70);
    r.print(cardEvent('01JZAAAAAAAAAAAAAAAAAAAAAA'));
    r.print(cardEvent('01JZBBBBBBBBBBBBBBBBBBBBBB'));
    r.print(cardEvent('01JZCCCCCCCCCCCCCCCCCCCCCC'));
    const footer = r.screen.at(-1)!.slice(ERASE.length);
    expect(footer).toBe('3 pending: 01JZAAAAAAAAAAAAAAAAAAAAAA 42s left · +2 more');
    expect(footer.length).toBeLessThan(70);
    const wide = rig(plainStyler, 200);
    wide.print(cardEvent('01JZAAAAAAAAAAAAAAAAAAAAAA'));
    wide.print(cardEvent('01JZBBBBBBBBBBBBBBBBBBBBBB'));
    expect(wide.screen.at(-1)).toBe(`${ERASE}2 pending: 01JZAAAAAAAAAAAAAAAAAAAAAA 42s left · 01JZBBBBBBBBBBBBBBBBBBBBBB 42s left`);
    // a narrow terminal: the first card, cut; one that reports no width (0) counts as 80 columns
    const narrow = rig(plainStyler, 30);
    narrow.print(cardEvent());
    expect(narrow.screen.at(-1)).toBe(`${ERASE}1 pending: 01JZ5R7Q1B8N6T3X0…`);
    const unsized = rig(plainStyler, 0);
    unsized.print(cardEvent());
    expect(unsized.screen.at(-1)).toBe(`${ERASE}1 pending: ${CARD} 42s left`);
  });

  it('NO_COLOR (the plain styler): no SGR in the footer or the card line; with colors both are styled', () => {
    const plain = rig(plainStyler);
    plain.print(cardEvent());
    expect(plain.screen.join('')).not.toMatch(SGR);
    const colored = rig(colorStyler);
    colored.print(cardEvent());
    expect(colored.screen.at(-1)).toMatch(SGR);
    expect(colored.lines[0]).toMatch(SGR);
  });

  it('close: the footer is erased and the refresh stopped', () => {
    const r = rig();
    r.print(cardEvent());
    r.footer.close();
    expect(r.screen.at(-1)).toBe(ERASE);
    expect(vi.getTimerCount()).toBe(0);
  });
});
