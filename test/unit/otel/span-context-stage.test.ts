import { describe, expect, it } from 'vitest';
import type { AepEvent } from '../../../src/aep/event.js';
import type { AepType } from '../../../src/aep/lifecycle.js';
import { SpanContextStage } from '../../../src/otel/span-context-stage.js';
import { inProcessDaemon } from '../../support/in-process-daemon.js';
import { scriptedSession } from '../../support/scripted-session.js';
import type { SpanCtx } from '../../../src/otel/span-builder.js';

const event = (id: string, type: AepType = 'tool.requested'): AepEvent => ({
  aep: '0.1',
  id,
  type,
  time: '2026-11-29T19:00:00.000Z',
  source: 'aep://h/agent/hermes/session/s',
  agent: 'hermes',
  session: 's',
  run: 'r',
  seq: 0,
  epoch: 1,
  severity: 'info',
  capture: 'metadata',
  data: {},
});

const CTX: SpanCtx = { traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), sampled: true, kind: 'tool' };

describe('span context stage', () => {
  it('returns new frozen events with the traceparent of their span, and leaves its input alone', () => {
    const seen: string[] = [];
    const stage = new SpanContextStage({
      assign: (ev) => {
        seen.push(ev.id);
        return ev.type === 'session.started' ? undefined : CTX;
      },
    });
    const input = [event('e1'), event('e2', 'session.started')];
    const out = stage.process(input);
    expect(seen).toEqual(['e1', 'e2']);
    expect(out[0]).not.toBe(input[0]);
    expect(out[0]!.traceparent).toBe(`00-${'a'.repeat(32)}-${'b'.repeat(16)}-01`);
    // an event of no unit: no traceparent, still a new frozen event
    expect(out[1]!.traceparent).toBeUndefined();
    expect('traceparent' in out[1]!).toBe(false);
    for (const ev of out) expect(Object.isFrozen(ev)).toBe(true);
    for (const ev of input) {
      expect(ev.traceparent).toBeUndefined();
      expect(Object.isFrozen(ev)).toBe(false);
    }
    // the stamp comes last, as the mirror's assignment used to put it
    expect(Object.keys(out[0]!).at(-1)).toBe('traceparent');
  });

  it('an unsampled span stamps flags 00', () => {
    const stage = new SpanContextStage({ assign: () => ({ ...CTX, sampled: false }) });
    expect(stage.process([event('e1')])[0]!.traceparent).toMatch(/-00$/);
  });

  it('a source that throws costs the event its traceparent, not its place in the stream', () => {
    const stage = new SpanContextStage({
      assign: (ev) => {
        if (ev.id === 'bad') throw new Error('boom');
        return CTX;
      },
    });
    const out = stage.process([event('ok1'), event('bad'), event('ok2')]);
    expect(out.map((e) => e.id)).toEqual(['ok1', 'bad', 'ok2']);
    expect(out.map((e) => e.traceparent !== undefined)).toEqual([true, false, true]);
    expect(stage.errors).toBe(1);
  });

  it('in the daemon: a failing stage costs no hook its events, and /healthz counts it', async () => {
    const d = inProcessDaemon({
      stamp: new SpanContextStage({
        assign: () => {
          throw new Error('boom');
        },
      }),
    });
    try {
      const before = (await d.app.inject({ method: 'GET', url: '/healthz' })).json();
      expect(before.stamp_errors).toBeUndefined();
      for (const e of scriptedSession().envelopes.slice(0, 4)) expect((await d.app.inject({ method: 'POST', url: '/hook', payload: e })).statusCode).toBe(200);
      expect(d.memory.events.length).toBeGreaterThan(0);
      expect(d.memory.events.every((e) => e.traceparent === undefined && Object.isFrozen(e))).toBe(true);
      const h = (await d.app.inject({ method: 'GET', url: '/healthz' })).json();
      expect(h.stamp_errors).toBe(d.memory.events.length);
      expect(h.hooks_failed).toBe(0);
    } finally {
      await d.app.close();
    }
  });
});
