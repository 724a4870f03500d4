// tail colors only on a terminal, never with NO_COLOR, always with FORCE_COLOR (unless 0/false).
import { describe, expect, it } from 'vitest';
import { colorEnabled, colorStyler, plainStyler, stylerFor } from '../../../src/tail/color.js';

const tty = { isTTY: true };
const pipe = { isTTY: false };

describe('tail colors', () => {
  it.each([
    ['a terminal', tty, {}, true],
    ['a pipe', pipe, {}, false],
    ['a terminal with NO_COLOR=1', tty, { NO_COLOR: '1' }, false],
    ['a terminal with NO_COLOR empty (unset by the convention)', tty, { NO_COLOR: '' }, true],
    ['a terminal with TERM=dumb', tty, { TERM: 'dumb' }, false],
    ['a pipe with FORCE_COLOR=1', pipe, { FORCE_COLOR: '1' }, true],
    ['a pipe with FORCE_COLOR=1 and NO_COLOR=1 (FORCE_COLOR wins)', pipe, { FORCE_COLOR: '1', NO_COLOR: '1' }, true],
    ['a terminal with FORCE_COLOR=0', tty, { FORCE_COLOR: '0' }, false],
    ['a terminal with FORCE_COLOR=false', tty, { FORCE_COLOR: 'false' }, false],
  ])('%s → %s', (_name, stream, env, expected) => {
    expect(colorEnabled(stream, env)).toBe(expected);
  });

  it('the color styler emits ANSI sequences, the plain one none', () => {
    // eslint-disable-next-line no-control-regex
    expect(colorStyler('failure', 'x')).toMatch(/^(\u001b\[[0-9;]+m)+x(\u001b\[[0-9;]+m)+$/);
    expect(colorStyler('plain', 'x')).toBe('x');
    expect(plainStyler('failure', 'x')).toBe('x');
    expect(stylerFor(pipe, {})('failure', 'x')).toBe('x');
    expect(stylerFor(tty, {})('failure', 'x')).not.toBe('x');
  });
});
