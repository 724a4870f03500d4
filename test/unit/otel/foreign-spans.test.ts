import { describe, expect, it } from 'vitest';
import { ForeignSpans } from '../../../src/otel/foreign-spans.js';
import { samplerFromEnv } from '../../../src/otel/sampler.js';
import { checkEnvelope } from '../../../src/stream/envelope-check.js';
import type { WireEvent } from '../../../src/aep/wire.js';

const builder = () => new ForeignSpans({ sampler: samplerFromEnv({}), ceiling: 'metadata' });

function wire(o: Record<string, unknown>): WireEvent {
  const agent = (o['agent'] as string | undefined) ?? 'alpha';
  const ev = {
    aep: '0.1',
    id: `id-${Math.random().toString(36).slice(2)}`,
    time: '2026-07-03T10:14:00.000Z',
    source: `aep://h/agent/${agent}/session/s_1`,
    agent,
    session: 's_1',
    seq: 0,
    ...o,
  };
  const line = JSON.stringify(ev);
  const r = checkEnvelope(JSON.parse(line), line);
  if (!r.ok) throw new Error(r.detail);
  return r.wire;
}

describe('ForeignSpans: other emitters’ events as spans (AEP-0005 §3.1), keyed by (source, session) (AEP-0001 §5.2)', () => {
  it('a run opening with a traceparent hangs its trace under that span; its tools follow; the event is not changed', () => {
    const b = builder();
    const tp = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const start = wire({ type: 'run.started', run: 'r1', traceparent: tp, data: { trigger: 'user' } });
    const before = start.line;
    expect(b.accept(start)).toEqual([]);
    b.accept(wire({ type: 'tool.requested', run: 'r1', seq: 1, data: { tool: { name: 'Bash', call_id: 't1' } } }));
    const [tool] = b.accept(wire({ type: 'tool.completed', run: 'r1', seq: 2, data: { tool: { name: 'Bash', call_id: 't1' }, status: 'success' } }));
    const [run] = b.accept(wire({ type: 'run.finished', run: 'r1', seq: 3, data: {} }));
    expect(run!.name).toBe('invoke_agent alpha');
    expect(run!.traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(run!.parentSpanId).toBe('00f067aa0ba902b7');
    expect(tool!.traceId).toBe(run!.traceId);
    expect(tool!.parentSpanId).toBe(run!.spanId);
    expect(run!.attributes['aep.session_id']).toBe('s_1');
    expect(start.line).toBe(before);
    expect(start.event['traceparent']).toBe(tp);
  });

  it('a traceparent on a later event (the emitter’s context of ITS unit) does not re-parent the run', () => {
    const b = builder();
    b.accept(wire({ type: 'run.started', run: 'r1', data: {} }));
    const tp = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const [run] = b.accept(wire({ type: 'run.finished', run: 'r1', seq: 1, traceparent: tp, data: {} }));
    expect(run!.parentSpanId).toBeUndefined();
    expect(run!.traceId).not.toBe('4bf92f3577b34da6a3ce929d0e0e4736');
  });

  it('two emitters with the same session and run names are two traces', () => {
    const b = builder();
    const spans = ['alpha', 'beta'].flatMap((agent) => {
      b.accept(wire({ agent, type: 'run.started', run: 'r1', data: {} }));
      return b.accept(wire({ agent, type: 'run.finished', run: 'r1', seq: 1, data: {} }));
    });
    expect(spans.map((s) => s.name)).toEqual(['invoke_agent alpha', 'invoke_agent beta']);
    expect(spans[0]!.traceId).not.toBe(spans[1]!.traceId);
    expect(spans.map((s) => s.attributes['aep.session_id'])).toEqual(['s_1', 's_1']);
  });

  it('agent-scoped events and seq-less foreign-emitter events belong to no unit and never throw', () => {
    const b = builder();
    expect(b.accept(wire({ type: 'agent.heartbeat', session: undefined, seq: undefined, source: 'aep://h/agent/alpha', data: {} }))).toEqual([]);
    b.accept(wire({ type: 'run.started', run: 'r1', data: {} }));
    expect(() => b.accept(wire({ type: 'control.cancel', run: 'r1', seq: undefined, data: { scope: 'run' } }))).not.toThrow();
    const [run] = b.accept(wire({ type: 'run.cancelled', run: 'r1', seq: 2, data: {} }));
    // the command rode on the run's span; its missing seq is left unset, not written as undefined
    const cmd = run!.events.find((e) => e.name === 'control.cancel')!;
    expect(Object.values(cmd.attributes)).not.toContain(undefined);
  });
});
