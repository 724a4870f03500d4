import { describe, expect, it } from 'vitest';
import type { AepEvent } from '../../../src/aep/event.js';
import { EventBus } from '../../../src/bus/event-bus.js';
import type { Degradation } from '../../../src/core/health-latch.js';
import type { Consumer, Reporting } from '../../../src/bus/consumer.js';
import type { DurableLog, WriteOutcome } from '../../../src/bus/durable-log.js';

const events = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `e${i}`, session: 's' }) as unknown as AepEvent);

/** A durable log scripted per test: what `write` returns or throws, what it refuses, its health. */
class ScriptedLog implements DurableLog {
  readonly seen: (readonly AepEvent[])[] = [];
  refusals = 0;
  constructor(
    readonly name: string,
    private readonly behave: {
      write?: (events: readonly AepEvent[]) => Promise<WriteOutcome>;
      refusal?: string;
      health?: Degradation;
    } = {},
  ) {}
  write(evs: readonly AepEvent[]): Promise<WriteOutcome> {
    this.seen.push(evs);
    return this.behave.write ? this.behave.write(evs) : Promise.resolve({ written: evs.length, retained: 0, lost: 0 });
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

/** An after-durable consumer scripted per test: what `consume` does, its health; it keeps what it was handed or told was given up. */
class ScriptedConsumer implements Consumer, Reporting {
  readonly seen: (readonly AepEvent[])[] = [];
  readonly givenUp: (readonly AepEvent[])[] = [];
  /** never called by the bus: only durable logs are asked */
  refusals = 0;
  constructor(
    readonly name: string,
    private readonly behave: { consume?: (events: readonly AepEvent[]) => void; health?: Degradation } = {},
  ) {}
  consume(evs: readonly AepEvent[]): void {
    this.seen.push(evs);
    this.behave.consume?.(evs);
  }
  unwritten(evs: readonly AepEvent[]): void {
    this.givenUp.push(evs);
  }
  refusal(): string | undefined {
    this.refusals++;
    return 'busy';
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

const busOf = (durable: DurableLog[], after: (Consumer & Reporting)[] = []) => {
  const bus = new EventBus();
  for (const s of durable) bus.addDurable(s);
  for (const c of after) bus.addAfterDurable(c);
  return bus;
};

const tick = () => new Promise((r) => setImmediate(r));

describe('EventBus.publish', () => {
  it('hands every log and consumer the same batch: the durable logs in the order they were added, then the consumers in theirs', async () => {
    const order: string[] = [];
    const log = (name: string) =>
      new ScriptedLog(name, {
        write: (evs) => {
          order.push(name);
          return Promise.resolve({ written: evs.length, retained: 0, lost: 0 });
        },
      });
    const consumer = (name: string) => new ScriptedConsumer(name, { consume: () => void order.push(name) });
    const logs = [log('b'), log('d')];
    const after = [consumer('a'), consumer('c')];
    const batch = events(3);
    expect(await busOf(logs, after).publish(batch)).toEqual({ retained: 0, lost: 0 });
    expect(order).toEqual(['b', 'd', 'a', 'c']);
    for (const s of [...logs, ...after]) expect(s.seen).toEqual([batch]);
  });

  it('an empty batch reaches no log and no consumer', async () => {
    const s = new ScriptedLog('log');
    const c = new ScriptedConsumer('mirror');
    expect(await busOf([s], [c]).publish([])).toEqual({ retained: 0, lost: 0 });
    expect(s.seen).toEqual([]);
    expect(c.seen).toEqual([]);
  });

  it('settles when the durable logs settled; the consumers get the batch only then, never before', async () => {
    let release!: (o: WriteOutcome) => void;
    const slow = new ScriptedLog('log', { write: () => new Promise<WriteOutcome>((r) => (release = r)) });
    const mirror = new ScriptedConsumer('mirror');
    let settled = false;
    const p = busOf([slow], [mirror])
      .publish(events(2))
      .then((o) => ((settled = true), o));
    for (let i = 0; i < 10; i++) await tick();
    expect(settled).toBe(false);
    expect(mirror.seen).toEqual([]);
    release({ written: 2, retained: 0, lost: 0 });
    expect(await p).toEqual({ retained: 0, lost: 0 });
    expect(mirror.seen).toHaveLength(1);
  });

  it('batches written at once reach the consumers in publication order, whatever order their writes settle in; a retained one does not hold the later ones up', async () => {
    const writes: ((o: WriteOutcome) => void)[] = [];
    const log = new ScriptedLog('log', { write: () => new Promise<WriteOutcome>((r) => writes.push(r)) });
    const hub = new ScriptedConsumer('hub');
    const bus = busOf([log], [hub]);
    const [a, b, c] = [events(1), events(1), events(1)];
    const [ra, rb, rc] = [bus.publish(a), bus.publish(b), bus.publish(c)];
    let finishA!: (v: { written: number; lost: number }) => void;
    writes[2]!({ written: 1, retained: 0, lost: 0 });
    writes[1]!({ written: 1, retained: 0, lost: 0 });
    await Promise.all([rb, rc]);
    // b and c are written, but a (published first) is still being written: nothing is delivered yet
    expect(hub.seen).toEqual([]);
    writes[0]!({ written: 0, retained: 1, lost: 0, reason: 'write failed: ENOSPC', final: new Promise((r) => (finishA = r)) });
    await ra;
    // a is retained: b and c go on without it, in order
    expect(hub.seen).toEqual([b, c]);
    finishA({ written: 1, lost: 0 });
    await (
      await ra
    ).finalLost;
    expect(hub.seen).toEqual([b, c, a]);
  });

  it('retained: the consumers get the batch once it is finally written, and never when it is finally given up', async () => {
    let finish!: (v: { written: number; lost: number }) => void;
    const log = new ScriptedLog('log', {
      write: () => Promise.resolve({ written: 0, retained: 2, lost: 0, reason: 'write failed: ENOSPC', final: new Promise((r) => (finish = r)) }),
    });
    const mirror = new ScriptedConsumer('mirror');
    const bus = busOf([log], [mirror]);
    const batch = events(2);
    const out = await bus.publish(batch);
    expect(out).toMatchObject({ retained: 2, lost: 0 });
    await tick();
    expect(mirror.seen).toEqual([]);
    expect([...bus.inFlight()]).toEqual([batch]);
    finish({ written: 2, lost: 0 });
    expect(await out.finalLost).toBe(0);
    expect(mirror.seen).toEqual([batch]);
    expect([...bus.inFlight()]).toEqual([]);

    let giveUp!: (v: { written: number; lost: number }) => void;
    const log2 = new ScriptedLog('log', {
      write: () => Promise.resolve({ written: 0, retained: 2, lost: 0, reason: 'write failed: ENOSPC', final: new Promise((r) => (giveUp = r)) }),
    });
    const mirror2 = new ScriptedConsumer('mirror');
    const bus2 = busOf([log2], [mirror2]);
    const batch2 = events(2);
    const out2 = await bus2.publish(batch2);
    giveUp({ written: 0, lost: 2 });
    expect(await out2.finalLost).toBe(2);
    expect(mirror2.seen).toEqual([]);
    expect(mirror2.givenUp).toEqual([batch2]);
    expect([...bus2.inFlight()]).toEqual([]);
  });

  it('lost at once: no consumer gets the batch; those that prepared something for it are told', async () => {
    const log = new ScriptedLog('log', { write: () => Promise.resolve({ written: 1, retained: 0, lost: 1, reason: 'write failed: EIO' }) });
    const mirror = new ScriptedConsumer('mirror');
    const batch = events(2);
    expect(await busOf([log], [mirror]).publish(batch)).toMatchObject({ lost: 1, reason: 'write failed: EIO' });
    expect(mirror.seen).toEqual([]);
    expect(mirror.givenUp).toEqual([batch]);
  });

  it('sums what the durable logs retained and lost, keeps the first reason, and settles finalLost once every retained event is settled', async () => {
    let finishA!: (v: { written: number; lost: number }) => void;
    const a = new ScriptedLog('a', {
      write: () => Promise.resolve({ written: 0, retained: 2, lost: 1, reason: 'write failed: ENOSPC', final: new Promise((r) => (finishA = r)) }),
    });
    const b = new ScriptedLog('b', {
      write: () => Promise.resolve({ written: 0, retained: 1, lost: 0, reason: 'other', final: Promise.resolve({ written: 0, lost: 1 }) }),
    });
    const c = new ScriptedLog('c', { write: () => Promise.resolve({ written: 0, retained: 0, lost: 3 }) });
    const out = await busOf([a, b, c]).publish(events(3));
    expect(out).toMatchObject({ retained: 3, lost: 4, reason: 'write failed: ENOSPC' });
    let finalLost: number | undefined;
    void out.finalLost!.then((n) => (finalLost = n));
    for (let i = 0; i < 10; i++) await tick();
    expect(finalLost).toBeUndefined();
    finishA({ written: 1, lost: 1 });
    expect(await out.finalLost).toBe(2);
  });

  it('no finalLost when nothing was retained', async () => {
    const out = await busOf([new ScriptedLog('log')]).publish(events(1));
    expect(out).not.toHaveProperty('finalLost');
    expect(out).not.toHaveProperty('reason');
  });

  it('a durable log that throws or rejects counts its events lost (a throw is counted); the others are unaffected', async () => {
    const boom = () => {
      throw new Error('boom');
    };
    const throwsLog = new ScriptedLog('log', { write: boom });
    const rejects = new ScriptedLog('other', { write: () => Promise.reject(new Error('no')) });
    const fine = new ScriptedLog('fine');
    const bus = busOf([throwsLog, rejects, fine]);
    expect(await bus.publish(events(2))).toEqual({ retained: 0, lost: 4, reason: 'sink failed' });
    expect(fine.seen).toHaveLength(1);
    expect(bus.stats()).toMatchObject({ errors: 1, fine: { batches: 1 } });
  });

  it('a consumer that throws is counted and skipped; the consumers after it still get the batch', async () => {
    const throwsMirror = new ScriptedConsumer('mirror', {
      consume: () => {
        throw new Error('boom');
      },
    });
    const hub = new ScriptedConsumer('hub');
    const bus = busOf([new ScriptedLog('log')], [throwsMirror, hub]);
    expect(await bus.publish(events(2))).toEqual({ retained: 0, lost: 0 });
    expect(hub.seen).toHaveLength(1);
    expect(bus.stats()).toMatchObject({ errors: 1, hub: { batches: 1 }, log: { batches: 1 } });
  });
});

describe('EventBus.refusal and degraded', () => {
  it('a hook is refused when a durable log refuses, named after the first that does; consumers are not asked', () => {
    const mirror = new ScriptedConsumer('mirror');
    const ok = new ScriptedLog('ok');
    const full = new ScriptedLog('log', { refusal: 'queue full' });
    const late = new ScriptedLog('late', { refusal: 'other' });
    expect(busOf([ok, full, late], [mirror]).refusal()).toBe('log: queue full');
    expect(mirror.refusals).toBe(0);
    expect(late.refusals).toBe(0);
    expect(busOf([ok], [mirror]).refusal()).toBeUndefined();
    expect(mirror.refusals).toBe(0);
  });

  it('degraded lists every log and consumer that reports itself unhealthy: the durable logs first, then the consumers, each in order', () => {
    const d1: Degradation = { sink: 'mirror', reason: 'export failed: ECONNREFUSED', since: '2026-01-01T00:00:00.000Z' };
    const d2: Degradation = { sink: 'log', reason: 'write failed: ENOSPC', since: '2026-01-01T00:00:01.000Z' };
    const d3: Degradation = { sink: 'metrics', reason: 'export failed: ECONNREFUSED', since: '2026-01-01T00:00:02.000Z' };
    const bus = busOf(
      [new ScriptedLog('ok'), new ScriptedLog('log', { health: d2 })],
      [new ScriptedConsumer('mirror', { health: d1 }), new ScriptedConsumer('fine'), new ScriptedConsumer('metrics', { health: d3 })],
    );
    expect(bus.degraded()).toEqual([d2, d1, d3]);
    expect(busOf([new ScriptedLog('ok')]).degraded()).toEqual([]);
  });
});
