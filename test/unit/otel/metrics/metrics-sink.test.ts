import { describe, expect, it } from 'vitest';
import { AggregationTemporality, DataPointType, type Histogram } from '@opentelemetry/sdk-metrics';
import { INSTRUMENTS } from '../../../../src/otel/metrics/instrument-catalogue.js';
import { measure, Pairing } from '../../../../src/otel/metrics/measurements.js';
import type { AepEvent } from '../../../../src/aep/event.js';
import { MARKER, scriptedSession } from '../../../support/scripted-session.js';
import { meteredDaemon, points } from './metrics-harness.js';

const CHAT = 'gen_ai.operation.name=chat,gen_ai.provider.name=custom,gen_ai.request.model=hermes-4,gen_ai.response.model=hermes-4-0521';
const SERVER = 'server.address=127.0.0.1,server.port=8080';

describe('metrics of a scripted session', () => {
  it('counts every kind of unit exactly, by its attributes', async () => {
    const d = meteredDaemon();
    await d.feed(scriptedSession().envelopes);
    const m = await d.collect();
    expect(Object.fromEntries(points(m.get('aep.runs')))).toEqual({
      'aep.outcome=finished,gen_ai.agent.name=hermes': 1,
      'aep.outcome=cancelled,gen_ai.agent.name=hermes': 1,
    });
    expect(Object.fromEntries(points(m.get('aep.tool.calls')))).toEqual({
      'aep.outcome=ok,gen_ai.tool.name=terminal': 2,
      'aep.outcome=failed,gen_ai.tool.name=read_file': 1,
      'aep.outcome=ok,gen_ai.tool.name=clarify': 1,
      'aep.outcome=ok,gen_ai.tool.name=delegate_task': 1,
      'aep.outcome=denied,gen_ai.tool.name=terminal': 1,
      'aep.outcome=failed,gen_ai.tool.name=terminal': 1,
    });
    expect(Object.fromEntries(points(m.get('aep.attention.cards')))).toEqual({
      'aep.attention.kind=permission,aep.attention.resolution=answered': 2,
      'aep.attention.kind=form,aep.attention.resolution=answered': 1,
      // the second question is left hanging: the session's end dismisses it
      'aep.attention.kind=form,aep.attention.resolution=dismissed': 1,
    });
    expect(Object.fromEntries(points(m.get('aep.approvals')))).toEqual({ 'aep.approval.choice=once': 1, 'aep.approval.choice=deny': 1 });
    const events = Object.fromEntries(points(m.get('aep.events')));
    expect(events['aep.event.type=tool.requested']).toBe(8);
    expect(events['aep.event.type=x.hermes.model.call']).toBe(3);
    expect(events['aep.event.type=session.ended']).toBe(2);
    expect(Object.values(events).reduce((a, b) => (a as number) + (b as number), 0)).toBe(d.memory.events.length);
    // three calls (n = 1, 2, 1): 900n input tokens plus 400 cached (read and written) and 40n output tokens
    const tokens = points(m.get('gen_ai.client.token.usage'));
    const input = tokens.get(`${CHAT},gen_ai.token.type=input,${SERVER}`) as Histogram;
    const output = tokens.get(`${CHAT},gen_ai.token.type=output,${SERVER}`) as Histogram;
    expect([input.count, input.sum, output.count, output.sum]).toEqual([3, 4800, 3, 160]);
    // 1300, 2200, 1300: all in (1024, 4096], the seventh bucket
    expect(input.buckets.counts.slice(5, 8)).toEqual([0, 3, 0]);
    // 40, 40 in (16, 64], 80 in (64, 256]
    expect(output.buckets.counts.slice(3, 5)).toEqual([2, 1]);
    const dur = points(m.get('gen_ai.client.operation.duration'));
    const chat = dur.get(`${CHAT},${SERVER}`) as Histogram;
    // 1.25 s each: the (0.64, 1.28] bucket
    expect([chat.count, chat.sum, chat.buckets.counts[7]]).toEqual([3, 3.75, 3]);
    const ok = dur.get('gen_ai.operation.name=execute_tool,gen_ai.tool.name=terminal') as Histogram;
    // Hermes's 812.4 ms is carried as whole milliseconds
    expect(ok.count).toBe(2);
    expect(ok.sum).toBeCloseTo(3.112, 9);
    expect(ok.buckets.counts.slice(7, 9)).toEqual([1, 1]);
    expect((dur.get('error.type=tool_denied,gen_ai.operation.name=execute_tool,gen_ai.tool.name=terminal') as Histogram).sum).toBe(0.001);
    expect((dur.get('error.type=tool_error,gen_ai.operation.name=execute_tool,gen_ai.tool.name=read_file') as Histogram).sum).toBe(0.004);
    const turns = [...dur.keys()].filter((k) => k.includes('invoke_agent'));
    expect(turns).toEqual([
      'gen_ai.agent.name=hermes,gen_ai.operation.name=invoke_agent,gen_ai.provider.name=custom,gen_ai.request.model=hermes-4',
      'error.type=cancelled,gen_ai.agent.name=hermes,gen_ai.operation.name=invoke_agent,gen_ai.provider.name=custom,gen_ai.request.model=hermes-4',
    ]);
    expect(d.sink.stats()).toMatchObject({ exports_ok: 1, exports_failed: 0, open_pairs: 0, unpaired_terminals: 0 });
  });

  it('carries exactly the attribute keys each instrument allows, and no content', async () => {
    const d = meteredDaemon({ readings: { hooks: () => ({ pre_tool_call: 2 }), queues: () => ({ log: 0 }), drops: () => ({ log: { dropped: 0 } }) } });
    await d.feed(scriptedSession().envelopes);
    const m = await d.collect();
    // no price database in process: aep.cost stays empty here (measure's test prices a call); the scripted session is
    // Hermes 0.18.2, which has no stream hooks: first-token time is measured in test/unit/usage/first-token.test.ts
    const untouched = new Set(['aep.cost', 'aep.model.time_to_first_token']);
    for (const spec of Object.values(INSTRUMENTS).filter((s) => !untouched.has(s.name))) {
      const metric = m.get(spec.name);
      expect(metric, spec.name).toBeDefined();
      expect(metric!.descriptor.unit, spec.name).toBe(spec.unit);
      for (const p of metric!.dataPoints) {
        for (const key of Object.keys(p.attributes)) expect(spec.attributes as readonly string[], `${spec.name}: ${key}`).toContain(key);
        expect(JSON.stringify(p.attributes)).not.toContain(MARKER);
      }
    }
    expect(m.get('gen_ai.client.token.usage')!.dataPointType).toBe(DataPointType.HISTOGRAM);
    expect(m.get('aep.queue.depth')!.dataPointType).toBe(DataPointType.GAUGE);
  });

  it('records nothing for events the start-up replay reads back, only their pairing', async () => {
    const d = meteredDaemon();
    const first = meteredDaemon();
    await first.feed(scriptedSession().envelopes);
    for (const ev of first.memory.events) d.sink.remember(ev);
    const m = await d.collect();
    expect(m.get('aep.events')?.dataPoints ?? []).toEqual([]);
    expect(m.get('aep.runs')?.dataPoints ?? []).toEqual([]);
  });

  it('chooses delta or cumulative temporality from the environment', async () => {
    const temporality = async (v: string | undefined) => {
      const d = meteredDaemon({ env: v ? { OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: v } : {}, readings: { queues: () => ({ log: 1 }) } });
      const m = await d.collect();
      return [m.get('aep.dropped')!.aggregationTemporality, m.get('aep.queue.depth')!.aggregationTemporality];
    };
    expect(await temporality(undefined)).toEqual([AggregationTemporality.CUMULATIVE, AggregationTemporality.CUMULATIVE]);
    expect(await temporality('delta')).toEqual([AggregationTemporality.DELTA, AggregationTemporality.CUMULATIVE]);
    // lowmemory: observable counters stay cumulative
    expect(await temporality('lowmemory')).toEqual([AggregationTemporality.CUMULATIVE, AggregationTemporality.CUMULATIVE]);
  });
});

describe('measure', () => {
  const ev = (type: string, over: Partial<AepEvent> & { data?: Record<string, unknown> }, time: string): AepEvent =>
    ({
      aep: '0.1',
      id: `${type}@${time}`,
      type,
      time,
      source: 's',
      agent: 'hermes',
      session: 's1',
      seq: 0,
      epoch: 1,
      severity: 'info',
      capture: 'metadata',
      data: {},
      ...over,
    }) as AepEvent;

  it('times a turn from its start, a card from its request, and bounds unknown values', () => {
    const p = new Pairing();
    measure(ev('run.started', { run: 'r1', hermesmodel: 'm1' }, '2026-01-01T00:00:00.000Z'), p);
    const card = ev('attention.requested', { run: 'r1', data: { kind: 'permission' } }, '2026-01-01T00:00:01.000Z');
    measure(card, p);
    const closed = measure(ev('attention.resolved', { run: 'r1', subject: card.id, data: { resolution: 'dismissed' } }, '2026-01-01T00:01:31.000Z'), p);
    expect(closed.find((x) => x.id === 'attentionWait')).toEqual({
      id: 'attentionWait',
      value: 90,
      attrs: { 'aep.attention.kind': 'permission', 'aep.attention.resolution': 'dismissed' },
    });
    expect(closed.find((x) => x.id === 'approvals')?.attrs).toEqual({ 'aep.approval.choice': 'dismissed' });
    const end = measure(ev('run.failed', { run: 'r1', data: { reason: 'incomplete' } }, '2026-01-01T00:02:00.000Z'), p);
    expect(end.find((x) => x.id === 'operationDuration')).toEqual({
      id: 'operationDuration',
      value: 120,
      attrs: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'hermes', 'gen_ai.request.model': 'm1', 'error.type': 'incomplete' },
    });
    expect(measure(ev('x.hermes.some.new.hook', {}, '2026-01-01T00:00:00.000Z'), p)[0]!.attrs).toEqual({ 'aep.event.type': 'x.hermes.other' });
    const priced = measure(
      ev(
        'x.hermes.model.call',
        { run: 'r2', data: { provider: 'p', model: 'free text model!', cost: { currency: 'USD', total: 0.25 } } },
        '2026-01-01T00:00:00.000Z',
      ),
      p,
    );
    expect(priced.find((x) => x.id === 'cost')).toEqual({ id: 'cost', value: 0.25, attrs: { 'gen_ai.provider.name': 'p', 'gen_ai.request.model': 'other' } });
    const unpriced = measure(
      ev('x.hermes.model.call', { run: 'r2', data: { provider: 'p', model: 'm', cost: { currency: 'EUR', total: 1 } } }, '2026-01-01T00:00:00.000Z'),
      p,
    );
    expect(unpriced.some((x) => x.id === 'cost')).toBe(false);
    expect(p.open).toBe(0);
  });

  it('keeps its pairing bounded and counts what it pushes out', () => {
    const p = new Pairing(2);
    for (const r of ['a', 'b', 'c']) measure(ev('run.started', { run: r }, '2026-01-01T00:00:00.000Z'), p);
    expect([p.open, p.evicted]).toEqual([2, 1]);
    const end = measure(ev('run.finished', { run: 'a' }, '2026-01-01T00:00:01.000Z'), p);
    expect(end.map((x) => x.id)).toEqual(['events', 'runs']);
    expect(p.unpaired).toBe(1);
  });
});
