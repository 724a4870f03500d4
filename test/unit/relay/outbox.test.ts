import { describe, expect, it } from 'vitest';
import { Outbox, SentRing } from '../../../src/relay/outbox.js';
import { ev } from './fake-relay.js';

describe('relay outbox (AEP-0003 §8.4 emitter-side buffering)', () => {
  it('when full drops debug/info first (oldest), counting each', () => {
    const o = new Outbox(3);
    const a = ev('notice');
    const b = ev('info');
    const c = ev('error');
    for (const w of [a, b, c]) expect(o.push(w)).toBe('ok');
    const d = ev('warning');
    expect(o.push(d)).toBe('low');
    expect(o.push(ev('debug'))).toBe('low'); // only notice+ queued: the newcomer low one goes
    expect({ low: o.droppedLow, notice: o.droppedNotice }).toEqual({ low: 2, notice: 0 });
    expect(o.take().map((w) => w.id)).toEqual([a.id, c.id, d.id]);
    expect(o.size).toBe(0);
  });

  it('drops the oldest notice+ only when nothing lower is queued, counted apart', () => {
    const o = new Outbox(2);
    const a = ev('notice');
    const b = ev('error');
    o.push(a);
    o.push(b);
    const c = ev('critical');
    expect(o.push(c)).toBe('notice');
    expect({ low: o.droppedLow, notice: o.droppedNotice }).toEqual({ low: 0, notice: 1 });
    expect(o.take().map((w) => w.id)).toEqual([b.id, c.id]);
  });

  it('the sent ring returns the events within the window before the cut, bounded', () => {
    const r = new SentRing(3, 100);
    const es = [ev(), ev(), ev(), ev()];
    es.forEach((w, i) => r.add(w, 1000 + i * 60));
    // held: es[1..3] at 1060, 1120, 1180; cut at 1200 → window from 1100
    expect(r.since(1200).map((w) => w.id)).toEqual([es[2]!.id, es[3]!.id]);
    expect(r.since(1200)).toEqual([]);
  });
});
