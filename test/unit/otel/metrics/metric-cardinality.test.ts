import { describe, expect, it } from 'vitest';
import { AggregationTemporality, InMemoryMetricExporter, type Histogram, type MetricData } from '@opentelemetry/sdk-metrics';
import { MetricsSink } from '../../../../src/otel/metrics/metrics-sink.js';
import { loadMetricsConfig } from '../../../../src/otel/metrics/metrics-config.js';
import type { DaemonReadings } from '../../../../src/otel/metrics/daemon-readings.js';
import type { AepEvent } from '../../../../src/aep/event.js';

/** The caps docs/metrics.md documents (a change there changes these). */
const TOOL_CAP = 100;
const MODEL_CAP = 50;
const SERIES_LIMIT = 1000;
const N = 2500;
const OVERFLOW = 'otel.metric.overflow';

let seq = 0;
const ev = (type: string, data: Record<string, unknown>, over: Partial<AepEvent> = {}): AepEvent =>
  ({
    aep: '0.1',
    id: `e${++seq}`,
    type,
    time: '2026-01-01T00:00:00.000Z',
    source: 's',
    agent: 'hermes',
    session: 's1',
    seq,
    epoch: 1,
    severity: 'info',
    capture: 'metadata',
    data,
    ...over,
  }) as AepEvent;

/** The real metrics sink over an in-memory exporter, cumulative (the default: every series kept for the daemon's life). */
function meteredSink(readings?: DaemonReadings) {
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const config = loadMetricsConfig({ OTEL_METRICS_EXPORTER: 'otlp', OTEL_METRIC_EXPORT_INTERVAL: '3600000' });
  const sink = new MetricsSink({ config, exporter: () => Promise.resolve(exporter), version: 'test', ...(readings ? { readings } : {}) });
  const collect = async (): Promise<Map<string, MetricData>> => {
    await sink.flush();
    const last = exporter.getMetrics().at(-1);
    return new Map((last?.scopeMetrics ?? []).flatMap((s) => s.metrics).map((m) => [m.descriptor.name, m]));
  };
  return { sink, collect };
}

const sumOf = (m: MetricData | undefined): number => (m?.dataPoints ?? []).reduce((a, p) => a + (p.value as number), 0);
const countOf = (m: MetricData | undefined): number => (m?.dataPoints ?? []).reduce((a, p) => a + (p.value as Histogram).count, 0);
const where = (m: MetricData | undefined, key: string, value: unknown) => (m?.dataPoints ?? []).filter((p) => p.attributes[key] === value);

const toolCall = (name: string) => ev('tool.completed', { tool: { name }, duration_ms: 5 }, { run: 'r1' });
const modelCall = (i: number, model = `model-${i}`, response = `${model}-0521`) =>
  ev(
    'x.hermes.model.call',
    {
      provider: `provider-${i}`,
      model,
      response_model: response,
      server_address: `host-${i}.example`,
      server_port: 1000 + i,
      'gen_ai.usage.input_tokens': 10,
      'gen_ai.usage.output_tokens': 2,
      duration_ms: 100,
    },
    { run: 'r1' },
  );

describe('metric cardinality', () => {
  it('keeps 2,500 distinct tool names to a bounded set of series, the rest under other, nothing lost', async () => {
    const { sink, collect } = meteredSink();
    sink.consume(Array.from({ length: N }, (_, i) => toolCall(`tool_${i}`)));
    const m = await collect();
    const calls = m.get('aep.tool.calls');
    expect(calls!.dataPoints.length).toBe(TOOL_CAP + 1);
    expect(where(calls, 'gen_ai.tool.name', 'other').map((p) => p.value)).toEqual([N - TOOL_CAP]);
    expect(sumOf(calls)).toBe(N);
    const dur = m.get('gen_ai.client.operation.duration');
    expect(dur!.dataPoints.length).toBe(TOOL_CAP + 1);
    expect(countOf(dur)).toBe(N);
    expect(where(dur, 'gen_ai.tool.name', 'other').map((p) => (p.value as Histogram).count)).toEqual([N - TOOL_CAP]);
    expect(sink.stats()).toMatchObject({ labels_capped: 2 * (N - TOOL_CAP) });
  });

  it('keeps 2,500 distinct models (and providers, servers, ports) to a bounded set of series, the rest under other', async () => {
    const { sink, collect } = meteredSink();
    sink.consume(Array.from({ length: N }, (_, i) => modelCall(i)));
    const m = await collect();
    const tokens = m.get('gen_ai.client.token.usage');
    const duration = m.get('gen_ai.client.operation.duration');
    // each attribute past its cap is other: the first calls keep their values (at most the smallest cap of them), the rest share one series
    for (const metric of [tokens, duration]) {
      expect(metric!.dataPoints.length, metric!.descriptor.name).toBeLessThanOrEqual(2 * (MODEL_CAP + 1));
      for (const key of ['gen_ai.request.model', 'gen_ai.response.model', 'gen_ai.provider.name', 'server.address', 'server.port'])
        expect(new Set(metric!.dataPoints.map((p) => p.attributes[key])).size, key).toBeLessThanOrEqual(MODEL_CAP + 1);
    }
    expect(countOf(tokens)).toBe(2 * N);
    expect(where(tokens, 'gen_ai.token.type', 'input').reduce((a, p) => a + (p.value as Histogram).sum!, 0)).toBe(10 * N);
    expect(countOf(duration)).toBe(N);
    const others = where(duration, 'gen_ai.request.model', 'other');
    expect(others.length).toBe(1);
    expect((others[0]!.value as Histogram).count).toBe(N - MODEL_CAP);
  });

  it('bounds the series of an instrument over the daemon life, across exports, in one visible overflow series', async () => {
    const { sink, collect } = meteredSink();
    // 50 request models x 50 response models: every value within its cap, 2,500 combinations, fed over five exports
    let series = 0;
    for (let batch = 0; batch < 5; batch++) {
      const calls = Array.from({ length: N / 5 }, (_, j) => {
        const i = batch * (N / 5) + j;
        return modelCall(0, `model-${i % MODEL_CAP}`, `response-${Math.floor(i / MODEL_CAP)}`);
      });
      sink.consume(calls);
      const m = await collect();
      series = m.get('gen_ai.client.operation.duration')!.dataPoints.length;
      expect(series).toBeLessThanOrEqual(SERIES_LIMIT);
      expect(countOf(m.get('gen_ai.client.operation.duration'))).toBe((batch + 1) * (N / 5));
    }
    const m = await collect();
    const dur = m.get('gen_ai.client.operation.duration');
    expect(series).toBe(SERIES_LIMIT);
    const overflow = where(dur, OVERFLOW, true);
    expect(overflow.length).toBe(1);
    expect((overflow[0]!.value as Histogram).count).toBe(N - (SERIES_LIMIT - 1));
    expect(where(m.get('gen_ai.client.token.usage'), OVERFLOW, true).length).toBe(1);
    expect(sink.stats()).toMatchObject({ series_capped: expect.any(Number) as number });
    expect(sink.stats().overflow_instruments).toBe(2);
    expect(sink.stats().series_capped).toBe(N - (SERIES_LIMIT - 1) + 2 * N - (SERIES_LIMIT - 1));
  });

  it('sets the SDK cardinality limit: observed series past it go to its overflow series, and sums add up under other', async () => {
    // 40 sinks x 100 reasons, from the daemon's own counters: capped per attribute (32 sinks, 64 reasons) then by the SDK
    const drops: Record<string, Record<string, number>> = {};
    for (let s = 0; s < 40; s++) drops[`sink_${s}`] = Object.fromEntries(Array.from({ length: 100 }, (_, r) => [`reason_${r}`, 1]));
    const dropped = (await meteredSink({ drops: () => drops }).collect()).get('aep.dropped');
    expect(dropped!.dataPoints.length).toBe(SERIES_LIMIT);
    expect(where(dropped, OVERFLOW, true).length).toBe(1);
    // the sink's own counters keep their names
    expect(where(dropped, 'aep.sink', 'metrics').length).toBe(2);
    const queues = Object.fromEntries(Array.from({ length: N }, (_, i) => [`q${i}`, 1]));
    const depth = (await meteredSink({ queues: () => queues }).collect()).get('aep.queue.depth');
    // 2,500 queues: 32 by name, the others summed under other
    expect(depth!.dataPoints.length).toBe(33);
    expect(sumOf(depth)).toBe(N);
    expect(where(depth, 'aep.sink', 'other').map((p) => p.value)).toEqual([N - 32]);
  });
});
