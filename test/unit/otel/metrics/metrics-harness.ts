import { AggregationTemporality, InMemoryMetricExporter, type MetricData } from '@opentelemetry/sdk-metrics';
import { MetricsSink } from '../../../../src/otel/metrics/metrics-sink.js';
import { loadMetricsConfig } from '../../../../src/otel/metrics/metrics-config.js';
import type { DaemonReadings } from '../../../../src/otel/metrics/daemon-readings.js';
import { inProcessDaemon } from '../../../support/in-process-daemon.js';
import type { Envelope } from '../../../support/scripted-session.js';

/** The daemon wiring in process with a metrics sink exporting into memory (the interval long: only flush exports). */
export function meteredDaemon(opts: { env?: Record<string, string>; readings?: DaemonReadings } = {}) {
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const config = loadMetricsConfig({ OTEL_METRICS_EXPORTER: 'otlp', OTEL_METRIC_EXPORT_INTERVAL: '3600000', ...opts.env });
  const sink = new MetricsSink({ config, exporter: () => Promise.resolve(exporter), version: 'test', ...(opts.readings ? { readings: opts.readings } : {}) });
  const d = inProcessDaemon({ consumers: [sink] });
  const feed = async (envelopes: readonly Envelope[]) => {
    for (const e of envelopes) {
      const r = await d.app.inject({ method: 'POST', url: '/hook', payload: e });
      if (r.statusCode !== 200) throw new Error(`hook refused: ${r.body}`);
    }
  };
  /** the metrics of the last export, by name */
  const collect = async (): Promise<Map<string, MetricData>> => {
    await sink.flush();
    const last = exporter.getMetrics().at(-1);
    return new Map((last?.scopeMetrics ?? []).flatMap((s) => s.metrics).map((m) => [m.descriptor.name, m]));
  };
  return { ...d, sink, exporter, feed, collect };
}

/** A data point's attributes as a stable key: `k=v,k=v` sorted. */
export const keyOf = (a: Record<string, unknown>): string =>
  Object.entries(a)
    .sort(([x], [y]) => x.localeCompare(y))
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(',');

/** name → (attribute key → value): a sum's value, a histogram's { count, sum, buckets } */
export function points(m: MetricData | undefined): Map<string, unknown> {
  return new Map((m?.dataPoints ?? []).map((p) => [keyOf(p.attributes), p.value]));
}
