import { describe, expect, it } from 'vitest';
import type { AepEvent } from '../../../src/aep/event.js';
import { EventBus } from '../../../src/sinks/event-bus.js';
import type { Degradation } from '../../../src/core/health-latch.js';
import type { EventSink, WriteOutcome } from '../../../src/sinks/sink.js';

const events = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `e${i}`, session: 's' }) as unknown as AepEvent);

/** A sink scripted per test: what `write` returns or throws, what it refuses, its health. */
class ScriptedSink implements EventSink {
  readonly seen: (readonly AepEvent[])[] = [];
  refusals = 0;
  constructor(
    readonly name: string,
    readonly durable: boolean,
    private readonly behave: {
      write?: (events: readonly AepEvent[]) => void | Promise<WriteOutcome>;
      refusal?: string;
      health?: Degradation;
    } = {},
  ) {}
  write(evs: readonly AepEvent[]): void | Promise<WriteOutcome> {
    this.seen.push(evs);
    return this.behave.write ? this.behave.write(evs) : this.durable ? Promise.resolve({ written: evs.length, retained: 0, lost: 0 }) : undefined;
  }
  refusal(): string | undefined {
    this.refusals++;
    return this.behave.refusal;
  }
  health(): Degradation | undefined {
    return this.behave.health;
  }
  async flush(): Promise<void> {}
  async shutdown(): Promise<void> {}
  stats() {
    return { batches: this.seen.length };
  }
}

const busOf = (...sinks: EventSink[]) => {
  const bus = new EventBus();
  for (const s of sinks) bus.add(s);
  return bus;
};

describe('EventBus.publish', () => {
  it('hands every sink the same batch, in the order they were added', async () => {
    const order: string[] = [];
    const mk = (name: string, durable: boolean) =>
      new ScriptedSink(name, durable, {
        write: (evs) => {
          order.push(name);
          return durable ? Promise.resolve({ written: evs.length, retained: 0, lost: 0 }) : undefined;
        },
      });
    const sinks = [mk('a', false), mk('b', true), mk('c', false)];
    const batch = events(3);
    expect(await busOf(...sinks).publish(batch)).toEqual({ retained: 0, lost: 0 });
    expect(order).toEqual(['a', 'b', 'c']);
    for (const s of sinks) expect(s.seen).toEqual([batch]);
  });

  it('an empty batch reaches no sink', async () => {
    const s = new ScriptedSink('log', true);
    expect(await busOf(s).publish([])).toEqual({ retained: 0, lost: 0 });
    expect(s.seen).toEqual([]);
  });

  it('settles when the durable sinks settled, never waiting on a non-durable one', async () => {
    let release!: (o: WriteOutcome) => void;
    const slow = new ScriptedSink('log', true, { write: () => new Promise<WriteOutcome>((r) => (release = r)) });
    const never = new ScriptedSink('mirror', false, { write: () => new Promise<WriteOutcome>(() => undefined) });
    let settled = false;
    const p = busOf(never, slow)
      .publish(events(2))
      .then((o) => ((settled = true), o));
    await new Promise((r) => setTimeout(r, 10));
    expect(settled).toBe(false);
    release({ written: 2, retained: 0, lost: 0 });
    expect(await p).toEqual({ retained: 0, lost: 0 });
  });

  it('sums what the durable sinks retained and lost, keeps the first reason, and settles finalLost once every retained event is settled', async () => {
    let finishA!: (v: { written: number; lost: number }) => void;
    const a = new ScriptedSink('a', true, {
      write: () => Promise.resolve({ written: 0, retained: 2, lost: 1, reason: 'write failed: ENOSPC', final: new Promise((r) => (finishA = r)) }),
    });
    const b = new ScriptedSink('b', true, {
      write: () => Promise.resolve({ written: 0, retained: 1, lost: 0, reason: 'other', final: Promise.resolve({ written: 0, lost: 1 }) }),
    });
    const c = new ScriptedSink('c', true, { write: () => Promise.resolve({ written: 0, retained: 0, lost: 3 }) });
    const out = await busOf(a, b, c).publish(events(3));
    expect(out).toMatchObject({ retained: 3, lost: 4, reason: 'write failed: ENOSPC' });
    let finalLost: number | undefined;
    void out.finalLost!.then((n) => (finalLost = n));
    await new Promise((r) => setTimeout(r, 5));
    expect(finalLost).toBeUndefined();
    finishA({ written: 1, lost: 1 });
    expect(await out.finalLost).toBe(2);
  });

  it('no finalLost when nothing was retained', async () => {
    const out = await busOf(new ScriptedSink('log', true)).publish(events(1));
    expect(out).not.toHaveProperty('finalLost');
    expect(out).not.toHaveProperty('reason');
  });

  it('a sink that throws is counted and skipped; a durable one that throws or rejects counts its events lost; the others are unaffected', async () => {
    const boom = () => {
      throw new Error('boom');
    };
    const throwsMirror = new ScriptedSink('mirror', false, { write: boom });
    const throwsLog = new ScriptedSink('log', true, { write: boom });
    const rejects = new ScriptedSink('other', true, { write: () => Promise.reject(new Error('no')) });
    const fine = new ScriptedSink('fine', true);
    const bus = busOf(throwsMirror, throwsLog, rejects, fine);
    expect(await bus.publish(events(2))).toEqual({ retained: 0, lost: 4, reason: 'sink failed' });
    expect(fine.seen).toHaveLength(1);
    expect(bus.stats()).toMatchObject({ errors: 2, fine: { batches: 1 } });
  });
});

describe('EventBus.refusal and degraded', () => {
  it('a hook is refused when a durable sink refuses, named after the first that does; non-durable sinks are not asked', () => {
    const mirror = new ScriptedSink('mirror', false, { refusal: 'mirror busy' });
    const ok = new ScriptedSink('ok', true);
    const full = new ScriptedSink('log', true, { refusal: 'queue full' });
    const late = new ScriptedSink('late', true, { refusal: 'other' });
    expect(busOf(mirror, ok, full, late).refusal()).toBe('log: queue full');
    expect(mirror.refusals).toBe(0);
    expect(late.refusals).toBe(0);
    expect(busOf(mirror, ok).refusal()).toBeUndefined();
  });

  it('degraded lists every sink that reports itself unhealthy, durable or not, in order', () => {
    const d1: Degradation = { sink: 'mirror', reason: 'export failed: ECONNREFUSED', since: '2026-01-01T00:00:00.000Z' };
    const d2: Degradation = { sink: 'log', reason: 'write failed: ENOSPC', since: '2026-01-01T00:00:01.000Z' };
    const bus = busOf(new ScriptedSink('mirror', false, { health: d1 }), new ScriptedSink('ok', true), new ScriptedSink('log', true, { health: d2 }));
    expect(bus.degraded()).toEqual([d1, d2]);
    expect(busOf(new ScriptedSink('ok', true)).degraded()).toEqual([]);
  });
});
