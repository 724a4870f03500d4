import { readFileSync } from 'node:fs';

import { describe, expect, it } from 'vitest';

import { compileFilter } from '../../../src/stream/attr-match.js';
import { parseFrom, parseLastEventId } from '../../../src/stream/resume-from.js';
import { wireOf } from '../../../src/aep/wire.js';

interface Corpus {
  match: { name: string; filter: unknown; event: Record<string, unknown>; match: boolean }[];
  invalid: { name: string; filter: unknown }[];
}
const corpus = JSON.parse(readFileSync(new URL('../../../fixtures/aep/attr-match/cases.json', import.meta.url), 'utf8')) as Corpus;
const wire = (ev: Record<string, unknown>) => wireOf(ev, JSON.stringify(ev), 'ingest');

describe('AEP-0003 §6.2 attr-match corpus', () => {
  it('has both kinds of cases', () => {
    expect(corpus.match.length).toBeGreaterThanOrEqual(10);
    expect(corpus.invalid.length).toBeGreaterThanOrEqual(10);
  });
  for (const c of corpus.match) {
    it(`match: ${c.name}`, () => {
      const r = compileFilter(c.filter);
      if (!r.ok) throw new Error(`refused: ${r.detail}`);
      expect(r.filter(wire(c.event))).toBe(c.match);
    });
  }
  for (const c of corpus.invalid) {
    it(`invalid (fail closed): ${c.name}`, () => {
      const r = compileFilter(c.filter);
      expect(r.ok).toBe(false);
    });
  }
});

describe('AEP-0003 §6.1/§6.2 attr-match beyond the corpus', () => {
  const ev = wire({ type: 'tool.completed', session: 's1', agent: 'a', severity: 'warning', capture: 'full', epoch: 2, acmeflag: true, acmen: 3 });
  const ok = (f: unknown) => {
    const r = compileFilter(f);
    if (!r.ok) throw new Error(r.detail);
    return r.filter(ev);
  };
  it('type patterns need a dot and never match the bare prefix', () => {
    expect(ok({ type: 'tool.*' })).toBe(true);
    expect(ok({ type: ['run.*', 'tool.completed'] })).toBe(true);
    expect(ok({ type: 'tool.completed.*' })).toBe(false);
    expect(wireMatches({ type: 'tool.*' }, { type: 'tool' })).toBe(false);
    for (const bad of ['*', '.*', 'tool*', 'to*ol.*', 'tool.**', ['tool.*', 5], []]) expect(compileFilter({ type: bad }).ok).toBe(false);
  });
  it('severity comparisons are inclusive and only on severity', () => {
    expect(ok({ severity: { gte: 'warning', lte: 'warning' } })).toBe(true);
    expect(ok({ severity: { lte: 'notice' } })).toBe(false);
    expect(ok({ severity: ['notice', 'warning'] })).toBe(true);
    for (const bad of [{ gte: 'loud' }, {}, { gte: 'info', lt: 'error' }]) expect(compileFilter({ severity: bad }).ok).toBe(false);
    expect(compileFilter({ agent: { gte: 'info' } }).ok).toBe(false);
  });
  it('equality is exact JSON equality (no coercion), extension keys included', () => {
    expect(ok({ epoch: 2 })).toBe(true);
    expect(ok({ epoch: '2' })).toBe(false);
    expect(ok({ acmeflag: true })).toBe(true);
    expect(ok({ acmeflag: 'true' })).toBe(false);
    expect(ok({ acmen: 3 })).toBe(true);
    expect(ok({ capture: 'full' })).toBe(true);
    expect(compileFilter({ epoch: 1.5 }).ok).toBe(false);
    expect(compileFilter({ agent: null }).ok).toBe(false);
    expect(compileFilter({ agent: { x: 1 } }).ok).toBe(false);
  });
  it('defaults apply to capture and severity, absent attributes never match', () => {
    expect(wireMatches({ capture: 'metadata' }, { type: 'run.started' })).toBe(true);
    expect(wireMatches({ severity: 'info' }, { type: 'run.started' })).toBe(true);
    expect(wireMatches({ run: ['r1', 'r2'] }, { type: 'run.started' })).toBe(false);
    expect(wireMatches({ acmeregion: 'eu' }, { type: 'run.started' })).toBe(false);
  });
  it('fails closed on non-objects and illegal keys; details never echo values', () => {
    for (const bad of [null, [], 'x', 3, { seq: 1 }, { Agent: 'a' }, { 'a-b': 'x' }, { abcdefghijklmnopqrstu: 'x' }, { __proto__x: 1 }]) {
      expect(compileFilter(bad).ok).toBe(false);
    }
    const r = compileFilter({ agent: 'SECRETVALUE*' });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.detail).not.toContain('SECRETVALUE');
  });
});

function wireMatches(filter: unknown, ev: Record<string, unknown>): boolean {
  const r = compileFilter(filter);
  if (!r.ok) throw new Error(r.detail);
  return r.filter(wire(ev));
}

describe('AEP-0003 §3.3/§6.5 from and Last-Event-ID', () => {
  it('parses positions and "all"', () => {
    expect(parseFrom('all')).toEqual({ ok: true, from: 'all' });
    expect(parseFrom([{ session: 's:1', epoch: 0, seq: 7 }])).toEqual({ ok: true, from: [{ session: 's:1', epoch: 0, seq: 7 }] });
    expect(parseFrom([])).toEqual({ ok: true, from: [] });
  });
  it('refuses anything else whole', () => {
    for (const bad of [
      'ALL',
      {},
      null,
      3,
      [null],
      [{ session: 's', epoch: 0 }],
      [{ session: '', epoch: 0, seq: 0 }],
      [{ session: 's', epoch: -1, seq: 0 }],
      [{ session: 's', epoch: 0, seq: 1.5 }],
      [{ session: 1, epoch: 0, seq: 0 }],
      [{ session: 's', epoch: '0', seq: 0 }],
    ]) {
      expect(parseFrom(bad).ok).toBe(false);
    }
  });
  it('Last-Event-ID splits from the right (a session may hold colons)', () => {
    expect(parseLastEventId('s_1:0:42')).toEqual({ session: 's_1', epoch: 0, seq: 42 });
    expect(parseLastEventId('a:b:c:3:9')).toEqual({ session: 'a:b:c', epoch: 3, seq: 9 });
    for (const bad of [undefined, '', 's', 's:1', ':1:2', 's:x:2', 's:1:', 's:1:-2', 's:01:2', 's:1:2.5', 's:1:99999999999999999999'])
      expect(parseLastEventId(bad)).toBeUndefined();
  });
});
