import { afterEach, describe, expect, it } from 'vitest';
import type { AepEvent } from '../../../src/aep/event.js';
import type { Degradation } from '../../../src/core/health-latch.js';
import type { DurableLog, WriteOutcome } from '../../../src/bus/durable-log.js';
import { inProcessDaemon } from '../../support/in-process-daemon.js';
import { preToolCallBody } from '../../support/scripted-session.js';

const envelope = (callId: string) => preToolCallBody(callId);

/** A durable sink whose writes settle only when the test says so; it can refuse, or say it is degraded. */
class GateSink implements DurableLog {
  readonly name = 'gate';
  readonly pending: { events: readonly AepEvent[]; settle: (o: WriteOutcome) => void }[] = [];
  refuse: string | undefined;
  degraded: Degradation | undefined;
  write(events: readonly AepEvent[]): Promise<WriteOutcome> {
    return new Promise((settle) => this.pending.push({ events, settle }));
  }
  refusal() {
    return this.refuse;
  }
  health() {
    return this.degraded;
  }
  async flush() {}
  async shutdown() {}
  stats() {
    return { pending: this.pending.length };
  }
}

describe('the hook reply waits for the durable sinks, and /healthz tells when one fails', () => {
  const apps: ReturnType<typeof inProcessDaemon>[] = [];
  const daemon = (sink: GateSink) => {
    const d = inProcessDaemon({ durable: [sink] });
    apps.push(d);
    return d;
  };
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((d) => d.app.close()));
  });

  it('no reply before the durable sink settled; then 200 {}', async () => {
    const gate = new GateSink();
    const d = daemon(gate);
    let replied = false;
    const reply = d.app.inject({ method: 'POST', url: '/hook', payload: envelope('c1'), headers: { 'content-type': 'application/json' } }).then((r) => {
      replied = true;
      return r;
    });
    while (gate.pending.length === 0) await new Promise((r) => setImmediate(r));
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    expect(replied).toBe(false);
    gate.pending[0]!.settle({ written: 1, retained: 0, lost: 0 });
    const r = await reply;
    expect(r.statusCode).toBe(200);
    expect(r.body).toBe('{}');
  });

  it('a write that failed is answered 503 (retained or lost, counted), never 200: a crash could lose it, so the transport spools it', async () => {
    const gate = new GateSink();
    const d = daemon(gate);
    const a = d.app.inject({ method: 'POST', url: '/hook', payload: envelope('c1'), headers: { 'content-type': 'application/json' } });
    const b = d.app.inject({ method: 'POST', url: '/hook', payload: envelope('c2'), headers: { 'content-type': 'application/json' } });
    while (gate.pending.length < 2) await new Promise((r) => setImmediate(r));
    gate.pending[0]!.settle({ written: 0, retained: 1, lost: 0, reason: 'write failed: ENOSPC', final: Promise.resolve({ written: 1, lost: 0 }) });
    gate.pending[1]!.settle({ written: 0, retained: 0, lost: 1, reason: 'write failed: EIO' });
    expect([(await a).statusCode, (await b).statusCode]).toEqual([503, 503]);
    expect((await a).json()).toMatchObject({ error: 'unavailable', reason: 'write failed: ENOSPC' });
    const h = (await d.app.inject({ method: 'GET', url: '/healthz' })).json();
    expect(h).toMatchObject({ hooks: 2, hooks_retained: 1, hooks_lost: 1, hooks_refused: 0 });
  });

  it('a refusing durable sink: 503 with the reason, and the hook is not processed at all', async () => {
    const gate = new GateSink();
    gate.refuse = 'queue full';
    const d = daemon(gate);
    const r = await d.app.inject({ method: 'POST', url: '/hook', payload: envelope('c1'), headers: { 'content-type': 'application/json' } });
    expect(r.statusCode).toBe(503);
    expect(r.json()).toMatchObject({ error: 'unavailable', reason: 'gate: queue full' });
    expect(d.memory.events).toEqual([]);
    expect(d.identity.counters.events).toBe(0);
    expect(gate.pending).toEqual([]);
    expect((await d.app.inject({ method: 'GET', url: '/healthz' })).json()).toMatchObject({ hooks: 1, hooks_refused: 1 });
  });

  it('/healthz: 200 ok, then 503 degraded with the reasons, then 200 again', async () => {
    const gate = new GateSink();
    const d = daemon(gate);
    const get = () => d.app.inject({ method: 'GET', url: '/healthz' });
    expect((await get()).statusCode).toBe(200);
    expect((await get()).json()).toMatchObject({ ok: true, status: 'ok', degraded: [] });
    gate.degraded = { sink: 'gate', reason: 'write failed: ENOSPC', since: '2026-01-01T00:00:00.000Z' };
    const bad = await get();
    expect(bad.statusCode).toBe(503);
    expect(bad.json()).toMatchObject({ ok: false, status: 'degraded', degraded: [gate.degraded], sinks: { gate: { pending: 0 } } });
    gate.degraded = undefined;
    expect((await get()).statusCode).toBe(200);
  });
});
