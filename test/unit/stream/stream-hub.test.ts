import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { compileFilter } from '../../../src/stream/attr-match.js';
import type { SubscriberSink, SubscriptionSpec } from '../../../src/stream/hub-types.js';
import { StreamHub } from '../../../src/stream/stream-hub.js';
import { comparePosition, wireOf, type Position, type WireEvent } from '../../../src/aep/wire.js';
import { waitFor } from '../../support/processes.js';

let ids = 0;
function ev(
  session: string | undefined,
  seq: number | undefined,
  o: { type?: string; severity?: string; capture?: string; origin?: 'own' | 'ingest'; data?: object } = {},
): WireEvent {
  const e: Record<string, unknown> = {
    aep: '0.1',
    id: `H${ids++}`,
    type: o.type ?? 'tool.completed',
    time: '2026-07-03T10:00:00Z',
    source: 'aep://h/agent/a',
    agent: 'a',
  };
  if (session !== undefined) e['session'] = session;
  if (seq !== undefined) e['seq'] = seq;
  if (o.severity) e['severity'] = o.severity;
  if (o.capture) e['capture'] = o.capture;
  if (o.data) e['data'] = o.data;
  return wireOf(e, JSON.stringify(e), o.origin ?? 'ingest');
}

/** A transport stand-in: records calls in order; `hold()` makes it report unsent bytes until `drain()`. */
class Sink implements SubscriberSink {
  calls: string[] = [];
  lines: string[] = [];
  got: WireEvent[] = [];
  done = false;
  kicked: string | undefined;
  private unsent = 0;
  private holding = false;
  private waiters: (() => void)[] = [];
  deliver(w: WireEvent, line: string): void {
    this.got.push(w);
    this.lines.push(line);
    this.calls.push(`event ${w.id}`);
    if (this.holding) this.unsent += Buffer.byteLength(line);
  }
  exhausted(session: string, e: { epoch: number; seq: number }): void {
    this.calls.push(`exhausted ${session} ${e.epoch}:${e.seq}`);
  }
  replayed(): void {
    this.done = true;
    this.calls.push('replayed');
  }
  kick(reason: string): void {
    this.kicked = reason;
  }
  pending(): number {
    return this.unsent;
  }
  drained(): Promise<void> {
    return new Promise((r) => this.waiters.push(r));
  }
  hold(bytes = 0): void {
    this.holding = true;
    this.unsent = bytes;
  }
  drain(): void {
    this.holding = false;
    this.unsent = 0;
    for (const w of this.waiters.splice(0)) w();
  }
}

const hub = (o: Partial<ConstructorParameters<typeof StreamHub>[0]> = {}) =>
  new StreamHub({ buffer: 100, sessions: 10, maxBytes: 1e8, clientBytes: 64 * 1024, subscriptions: 8, ...o });
const spec = (s: Partial<SubscriptionSpec> = {}): SubscriptionSpec => ({ filter: () => true, ...s });
const filter = (json: unknown) => {
  const r = compileFilter(json);
  if (!r.ok) throw new Error(r.detail);
  return r.filter;
};

describe('StreamHub live fan-out (AEP-0003 §5, §6)', () => {
  it('AEP-0003 §5 delivers every published event to every matching subscription, duplicates included', async () => {
    const h = hub();
    const [all, attn] = [new Sink(), new Sink()];
    h.subscribe(spec(), all);
    h.subscribe(spec({ filter: filter({ type: 'attention.*' }) }), attn);
    await waitFor('replayed', () => all.done && attn.done);
    const e1 = ev('s', 0);
    const e2 = ev('s', 1, { type: 'attention.requested' });
    h.publish([e1, e2, e1]);
    expect(all.got).toEqual([e1, e2, e1]);
    expect(all.lines).toEqual([e1.line, e2.line, e1.line]);
    expect(attn.got).toEqual([e2]);
    expect(h.stats()).toMatchObject({ events: 2, duplicates: 1, subscribers: 2 });
    expect(h.knows(e1)).toBe(true);
    expect(h.knows({ source: e1.source, id: 'nope' })).toBe(false);
  });

  it('a foreign sequenced event naming an own session is neither held nor delivered live, and is counted', async () => {
    const h = hub();
    const sink = new Sink();
    h.subscribe(spec(), sink);
    await waitFor('replayed', () => sink.done);
    const own = ev('s', 0, { origin: 'own' });
    const forged = ev('s', 9, { type: 'session.ended' });
    const routed = ev('s', undefined, { type: 'attention.routed' });
    h.publish([own, forged, routed]);
    expect(sink.got).toEqual([own, routed]);
    expect(h.stats()['own_lane_refused']).toBe(1);
    const later = new Sink();
    h.subscribe(spec({ from: 'all', live: false }), later);
    await waitFor('replayed', () => later.done);
    expect(later.got).toEqual([own, routed]);
  });

  it('AEP-0003 §6.4 applies the capture ceiling per subscription', async () => {
    const h = hub();
    const [meta, raw] = [new Sink(), new Sink()];
    h.subscribe(spec({ ceiling: 'metadata' }), meta);
    h.subscribe(spec(), raw);
    await waitFor('replayed', () => meta.done && raw.done);
    const e = ev('s', 0, { capture: 'full', data: { status: 'success', result: 'VERBATIM' } });
    h.publish([e]);
    expect(raw.lines[0]).toBe(e.line);
    expect(meta.lines[0]).not.toContain('VERBATIM');
    expect(JSON.parse(meta.lines[0]!)).toMatchObject({ id: e.id, capture: 'metadata' });
  });

  it('AEP-0003 §6.5 limit-exceeded past the subscription cap and for more positions than sessions held', () => {
    const h = hub({ subscriptions: 2, sessions: 2 });
    expect(h.subscribe(spec(), new Sink())).toHaveProperty('close');
    const from: Position[] = ['a', 'b', 'c'].map((session) => ({ session, epoch: 0, seq: 0 }));
    expect(h.subscribe(spec({ from }), new Sink())).toEqual({ code: 'limit-exceeded', detail: 'from: at most 2 positions' });
    const second = h.subscribe(spec(), new Sink());
    expect(h.subscribe(spec(), new Sink())).toEqual({ code: 'limit-exceeded', detail: 'subscriptions: at most 2' });
    if ('close' in second) second.close();
    expect(h.subscribe(spec(), new Sink())).toHaveProperty('close');
  });

  it('close() stops delivery; hub close kicks everyone; own sessions are listed until ended', async () => {
    const h = hub();
    const [a, b] = [new Sink(), new Sink()];
    const sa = h.subscribe(spec(), a);
    h.subscribe(spec(), b);
    await waitFor('replayed', () => a.done && b.done);
    if ('close' in sa) sa.close();
    h.publish([ev('mine', 0, { origin: 'own' }), ev('done', 0, { origin: 'own' }), ev('done', 1, { origin: 'own', type: 'session.ended' })]);
    expect(a.got).toEqual([]);
    expect(b.got).toHaveLength(3);
    expect(h.ownSessions()).toEqual(['mine']);
    expect(h.isOwnSession('done')).toBe(true);
    h.close('daemon stopping');
    expect(b.kicked).toBe('daemon stopping');
    expect(h.stats()).toMatchObject({ subscribers: 0, kicked: 0 });
    expect(h.replay).toEqual({ buffer: 100, all: true });
  });
});

describe('StreamHub replay (AEP-0003 §5, §7)', () => {
  it('AEP-0003 §3.3 exhausted comes before the replayed events, then replayed, then live', async () => {
    const h = hub({ buffer: 2 });
    const held = [0, 1, 2, 3].map((i) => ev('s', i));
    h.publish(held);
    const s = new Sink();
    h.subscribe(spec({ from: [{ session: 's', epoch: 0, seq: 0 }] }), s);
    const live = ev('s', 4);
    h.publish([live]);
    await waitFor('replay', () => s.done && s.got.length === 3);
    expect(s.calls).toEqual(['exhausted s 0:2', `event ${held[2]!.id}`, `event ${held[3]!.id}`, 'replayed', `event ${live.id}`]);
  });

  it('AEP-0003 §5 from "all" replays every held session and the agent lane, never exhausted; live=0 ends after replay', async () => {
    const h = hub({ buffer: 1 });
    const e = [ev('a', 0), ev('a', 1), ev(undefined, undefined, { type: 'agent.heartbeat' }), ev('b', 0)];
    h.publish(e);
    const s = new Sink();
    h.subscribe(spec({ from: 'all', live: false }), s);
    await waitFor('replayed', () => s.done);
    expect(s.calls).toEqual([`event ${e[1]!.id}`, `event ${e[2]!.id}`, `event ${e[3]!.id}`, 'replayed']);
    h.publish([ev('a', 2)]);
    expect(s.got).toHaveLength(3);
    expect(h.stats()['subscribers']).toBe(0);
  });

  it('replay is paced by drain and live events published meanwhile follow with no gap or reorder', async () => {
    const h = hub({ clientBytes: 64 * 1024 });
    const held = Array.from({ length: 50 }, (_, i) => ev('s', i));
    h.publish(held);
    const s = new Sink();
    s.hold(40 * 1024);
    h.subscribe(spec({ from: [{ session: 's', epoch: 0, seq: 9 }] }), s);
    const live = Array.from({ length: 5 }, (_, i) => ev('s', 50 + i));
    h.publish(live.slice(0, 2));
    await Promise.resolve();
    expect(s.got).toEqual([]);
    s.drain();
    h.publish(live.slice(2));
    await waitFor('all delivered', () => s.got.length === 45);
    expect(s.got).toEqual([...held.slice(10), ...live]);
  });

  it('AEP-0003 §7 resume at any position over random histories: held events after it then live, each once', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 6 }),
        fc.array(fc.constantFrom<'a' | 'b'>('a', 'b'), { maxLength: 30 }),
        fc.nat(30),
        fc.nat(5),
        async (buffer, sessions, seq, liveCount) => {
          const h = hub({ buffer, sessions: 2 });
          const next = { a: 0, b: 0 };
          const published = sessions.map((s) => ev(s, next[s]++));
          h.publish(published);
          const p = { session: 'a', epoch: 0, seq };
          const s = new Sink();
          h.subscribe(spec({ from: [p], filter: filter({ session: 'a' }) }), s);
          const live = Array.from({ length: liveCount }, () => ev('a', next.a++));
          h.publish(live);
          await waitFor('replay', () => s.done && s.got.length >= liveCount, 15_000, 1);
          const after = published.filter((w) => w.session === 'a' && comparePosition(w as Position, p) > 0);
          // two sessions within the cap and bytes to spare: each holds its last `buffer` events
          const held = published.filter((w) => w.session === 'a').slice(-buffer);
          const kept = after.filter((w) => held.includes(w));
          expect(s.got).toEqual([...kept, ...live]);
          expect(s.calls.some((c) => c.startsWith('exhausted'))).toBe(kept.length < after.length);
        },
      ),
      { numRuns: 200 },
    );
  });
});
