import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { ReplayBuffer, type ReplayStep } from '../../../src/stream/replay-buffer.js';
import { comparePosition, wireOf, type Position, type WireEvent } from '../../../src/aep/wire.js';

const all = () => true;
let ids = 0;
function ev(
  session: string | undefined,
  seq: number | undefined,
  o: { epoch?: number; type?: string; origin?: 'own' | 'ingest'; pad?: number; id?: string } = {},
): WireEvent {
  const e: Record<string, unknown> = {
    aep: '0.1',
    id: o.id ?? `E${ids++}`,
    type: o.type ?? (session === undefined ? 'agent.heartbeat' : 'tool.completed'),
    time: '2026-07-03T10:00:00Z',
    source: 'aep://h/agent/a',
    agent: 'a',
  };
  if (session !== undefined) e['session'] = session;
  if (seq !== undefined) e['seq'] = seq;
  if (o.epoch !== undefined) e['epoch'] = o.epoch;
  if (o.pad) e['subject'] = 'x'.repeat(o.pad);
  return wireOf(e, JSON.stringify(e), o.origin ?? 'ingest');
}
const events = (steps: ReplayStep[]) => steps.flatMap((s) => ('w' in s ? [s.w] : []));
const exhausted = (steps: ReplayStep[]) => steps.flatMap((s) => ('exhausted' in s ? [s.exhausted] : []));
const buf = (o: Partial<{ buffer: number; sessions: number; maxBytes: number }> = {}) => new ReplayBuffer({ buffer: 100, sessions: 10, maxBytes: 1e9, ...o });

describe('AEP-0003 §5 replay buffer', () => {
  it('admission dedupes on (source, id) and remembers evicted keys', () => {
    const b = buf({ buffer: 2 });
    const e0 = ev('s', 0);
    expect(b.admit(e0)).toBe(true);
    expect(b.admit(wireOf({ ...e0.event }, e0.line, 'ingest'))).toBe(false);
    expect(b.admit(ev('s', 0, { id: e0.id }))).toBe(false);
    const otherSource = wireOf({ ...e0.event, source: 'aep://h/agent/b' }, e0.line, 'ingest');
    expect(b.admit(otherSource)).toBe(true);
    b.admit(ev('s', 1));
    b.admit(ev('s', 2));
    expect(b.stats().events).toBe(2);
    expect(b.knows(e0)).toBe(true);
    expect(b.admit(e0)).toBe(false);
  });

  it('AEP-0003 §7 resumes strictly after the position, seq-less events after its event included', () => {
    const b = buf();
    const [a0, a1, cmd, a2] = [ev('s', 0), ev('s', 1), ev('s', undefined, { type: 'control.attention.cancel' }), ev('s', 2)];
    const early = ev('s', undefined, { type: 'attention.routed' });
    for (const w of [early, a0, a1, cmd, a2, ev('t', 0)]) b.admit(w);
    expect(events(b.plan([{ session: 's', epoch: 0, seq: 0 }], all))).toEqual([a1, cmd, a2]);
    expect(events(b.plan([{ session: 's', epoch: 0, seq: 1 }], all))).toEqual([cmd, a2]);
    expect(events(b.plan([{ session: 's', epoch: 0, seq: 2 }], all))).toEqual([]);
    expect(events(b.plan([{ session: 's', epoch: 1, seq: 0 }], all))).toEqual([]);
    expect(events(b.plan([{ session: 'unknown', epoch: 0, seq: 0 }], all))).toEqual([]);
    expect(exhausted(b.plan([{ session: 's', epoch: 0, seq: 0 }], all))).toEqual([]);
  });

  it("AEP-0003 §7 seq-less events count from the arrival of the position's own event, even after a late backfill", () => {
    const b = buf();
    const [s1, s3, routed, s2] = [ev('s', 1), ev('s', 3), ev('s', undefined, { type: 'attention.routed' }), ev('s', 2)];
    for (const w of [s1, s3, routed, s2]) b.admit(w);
    expect(events(b.plan([{ session: 's', epoch: 0, seq: 1 }], all))).toEqual([s3, routed, s2]);
    expect(events(b.plan([{ session: 's', epoch: 0, seq: 2 }], all))).toEqual([s3]);
    expect(events(b.plan([{ session: 's', epoch: 0, seq: 3 }], all))).toEqual([routed]);
  });

  it('AEP-0003 §5 replay-exhausted exactly when an event after the position was evicted', () => {
    const b = buf({ buffer: 3 });
    for (let i = 0; i < 6; i++) b.admit(ev('s', i));
    const at = (seq: number) => b.plan([{ session: 's', epoch: 0, seq }], all);
    expect(exhausted(at(0))).toEqual([{ session: 's', earliest: { epoch: 0, seq: 3 } }]);
    expect(at(0)[0]).toHaveProperty('exhausted');
    expect(events(at(0)).map((w) => w.seq)).toEqual([3, 4, 5]);
    expect(exhausted(at(1))).toHaveLength(1);
    expect(exhausted(at(2))).toEqual([]);
    expect(events(at(2)).map((w) => w.seq)).toEqual([3, 4, 5]);
    expect(exhausted(b.plan('all', all))).toEqual([]);
  });

  it('evicts the least recently active session whole and still signals its loss on resume', () => {
    const b = buf({ sessions: 2 });
    b.admit(ev('s1', 0));
    b.admit(ev('s2', 0));
    b.admit(ev('s1', 1));
    b.admit(ev('s3', 0));
    expect(b.stats().sessions).toBe(2);
    expect(events(b.plan('all', all)).map((w) => `${w.session}:${w.seq}`)).toEqual(['s1:0', 's1:1', 's3:0']);
    expect(exhausted(b.plan([{ session: 's2', epoch: 0, seq: 0 }], all))).toEqual([]);
    const lost = b.plan(
      [
        { session: 's2', epoch: 0, seq: 0 },
        { session: 's1', epoch: 0, seq: 0 },
      ],
      all,
    );
    expect(events(lost).map((w) => `${w.session}:${w.seq}`)).toEqual(['s1:1']);
    expect(exhausted(lost)).toEqual([]);
    b.admit(ev('s4', 0));
    expect(exhausted(b.plan([{ session: 's1', epoch: 0, seq: 0 }], all))).toEqual([{ session: 's1', earliest: { epoch: 0, seq: 2 } }]);
  });

  it('holds agent-scoped events in one ring replayed only by "all", in arrival order', () => {
    const b = buf({ buffer: 2 });
    const h = [ev(undefined, undefined), ev('s', 0), ev(undefined, undefined), ev(undefined, undefined)];
    for (const w of h) b.admit(w);
    expect(events(b.plan('all', all))).toEqual([h[1], h[2], h[3]]);
    expect(events(b.plan([{ session: 's', epoch: 0, seq: 0 }], all))).toEqual([]);
  });

  it('keeps bytes under maxBytes by evicting the oldest events', () => {
    const b = buf({ maxBytes: 2000 });
    for (let i = 0; i < 20; i++) b.admit(ev(i % 2 ? 'a' : 'b', i, { pad: 200 }));
    const s = b.stats();
    expect(s.bytes).toBeLessThanOrEqual(2000);
    const held = events(b.plan('all', all));
    expect(held.length).toBe(s.events);
    expect(held.map((w) => w.seq)).toEqual([...Array(held.length).keys()].map((i) => 20 - held.length + i));
  });

  it('lists own sessions not ended; isOwnSession counts ended ones', () => {
    const b = buf();
    b.admit(ev('own1', 0, { origin: 'own' }));
    b.admit(ev('own2', 0, { origin: 'own' }));
    b.admit(ev('own2', 1, { origin: 'own', type: 'session.ended' }));
    b.admit(ev('foreign', 0));
    expect(b.ownSessions()).toEqual(['own1']);
    expect(b.isOwnSession('own2')).toBe(true);
    expect(b.isOwnSession('foreign')).toBe(false);
  });

  it('an own lane takes no foreign sequenced event: its high-water never moves, a later own start evicts one held before', () => {
    const b = buf();
    const own = [0, 1, 2].map((i) => ev('s', i, { origin: 'own' }));
    for (const w of own) b.admit(w);
    const forged = ev('s', 9, { type: 'session.ended' });
    expect(b.collides(forged)).toBe(true);
    expect(b.admit(forged)).toBe(false);
    // a seq-less foreign-emitter event (a command, attention.routed) is part of the own session's view
    const routed = ev('s', undefined, { type: 'attention.routed' });
    expect(b.collides(routed)).toBe(false);
    expect(b.admit(routed)).toBe(true);
    expect(events(b.plan('all', all))).toEqual([...own, routed]);
    expect(b.ownSessions()).toEqual(['s']);

    // a foreign emitter that took the name first: its sequenced events leave the lane once this daemon's own session starts
    const c = buf();
    const early = ev('t', 9, { type: 'session.ended' });
    expect(c.admit(early)).toBe(true);
    const t0 = ev('t', 0, { origin: 'own' });
    expect(c.admit(t0)).toBe(true);
    expect(events(c.plan('all', all))).toEqual([t0]);
    expect(c.knows(early)).toBe(true);
    expect(c.stats().events).toBe(1);
    expect(c.ownSessions()).toEqual(['t']);
  });

  it('AEP-0003 §7 a resume never skips an own event: a position past anything the own lane assigned replays the lane whole', () => {
    const b = buf({ buffer: 3 });
    const own = [0, 1, 2, 3, 4].map((i) => ev('s', i, { origin: 'own' }));
    for (const w of own) b.admit(w);
    // positions it did assign: strictly after them, as always
    expect(events(b.plan([{ session: 's', epoch: 0, seq: 3 }], all))).toEqual([own[4]]);
    expect(events(b.plan([{ session: 's', epoch: 0, seq: 4 }], all))).toEqual([]);
    // a position it never assigned (a forged one a consumer took): every held event, after the exhausted notice
    const steps = b.plan([{ session: 's', epoch: 0, seq: 9 }], all);
    expect(exhausted(steps)).toEqual([{ session: 's', earliest: { epoch: 0, seq: 2 } }]);
    expect(events(steps)).toEqual(own.slice(2));
    expect(events(b.plan([{ session: 's', epoch: 1, seq: 0 }], all))).toEqual(own.slice(2));
  });
});

/** A random publish sequence: per op a session (or the agent lane), seq-less or not, a re-publish of an earlier event, a size. */
const opArb = fc.record({
  s: fc.constantFrom('a', 'b', 'c', 'd', 'e', undefined),
  seqless: fc.boolean(),
  dup: fc.nat(),
  redo: fc.boolean(),
  pad: fc.nat(300),
  bump: fc.boolean(),
});
const cfgArb = fc.record({ buffer: fc.integer({ min: 1, max: 8 }), sessions: fc.integer({ min: 1, max: 4 }), maxBytes: fc.integer({ min: 300, max: 4000 }) });

function run(
  cfg: { buffer: number; sessions: number; maxBytes: number },
  ops: { s: string | undefined; seqless: boolean; dup: number; redo: boolean; pad: number; bump: boolean }[],
) {
  const b = new ReplayBuffer(cfg);
  const published: WireEvent[] = [];
  const admitted: WireEvent[] = [];
  const next = new Map<string, Position>();
  for (const o of ops) {
    let w: WireEvent;
    if (o.redo && published.length > 0) w = published[o.dup % published.length]!;
    else if (o.s === undefined) w = ev(undefined, undefined, { pad: o.pad });
    else if (o.seqless) w = ev(o.s, undefined, { pad: o.pad, type: 'attention.routed' });
    else {
      const p = next.get(o.s) ?? { session: o.s, epoch: 0, seq: 0 };
      const pos = o.bump ? { session: o.s, epoch: p.epoch + 1, seq: 0 } : p;
      w = ev(o.s, pos.seq, { epoch: pos.epoch, pad: o.pad });
      next.set(o.s, { ...pos, seq: pos.seq + 1 });
    }
    published.push(w);
    if (b.admit(w)) admitted.push(w);
  }
  return { b, admitted, cfg };
}

describe('replay buffer properties', () => {
  it('bounds hold under random publish sequences', () => {
    fc.assert(
      fc.property(cfgArb, fc.array(opArb, { maxLength: 120 }), (cfg, ops) => {
        const { b, admitted } = run(cfg, ops);
        const held = events(b.plan('all', all));
        const s = b.stats();
        expect(s.events).toBe(held.length);
        expect(s.bytes).toBeLessThanOrEqual(cfg.maxBytes);
        expect(s.sessions).toBeLessThanOrEqual(cfg.sessions);
        const per = new Map<string | undefined, number>();
        for (const w of held) per.set(w.session, (per.get(w.session) ?? 0) + 1);
        for (const n of per.values()) expect(n).toBeLessThanOrEqual(cfg.buffer);
        expect(new Set(held.map((w) => w.id)).size).toBe(held.length);
        // "all" replays in arrival order across sessions and the agent lane
        const heldSet = new Set(held);
        expect(held).toEqual(admitted.filter((w) => heldSet.has(w)));
        for (const w of held) expect(b.knows(w)).toBe(true);
        // the last 1,024 evicted keys at least are remembered: re-publishing them is still a duplicate
        for (const w of admitted.slice(-1024)) expect(b.knows(w)).toBe(true);
        expect(s.evicted).toBe(admitted.length - held.length);
      }),
      { numRuns: 400 },
    );
  });

  it('AEP-0003 §7 resume after any position: exactly the held events after it, no duplicate, no gap unless exhausted', () => {
    fc.assert(
      fc.property(cfgArb, fc.array(opArb, { maxLength: 80 }), fc.constantFrom('a', 'b', 'c'), fc.nat(3), fc.nat(20), (cfg, ops, session, epoch, seq) => {
        const { b, admitted } = run(cfg, ops);
        const p = { session, epoch, seq };
        const steps = b.plan([p], all);
        const got = events(steps);
        const held = new Set(events(b.plan('all', all)));
        const after = (w: WireEvent) => w.session === session && w.seq !== undefined && comparePosition(w as Position, p) > 0;
        expect(new Set(got).size).toBe(got.length);
        for (const w of got) expect(held.has(w)).toBe(true);
        for (const w of got) if (w.seq !== undefined) expect(after(w)).toBe(true);
        // every held sequenced event after the position is replayed
        for (const w of held) if (after(w)) expect(got).toContain(w);
        const ex = exhausted(steps);
        const lostAfter = admitted.some((w) => after(w) && !held.has(w));
        expect(ex.length > 0).toBe(lostAfter);
        if (ex.length > 0) expect(steps[0]).toHaveProperty('exhausted');
      }),
      { numRuns: 600 },
    );
  });
});
