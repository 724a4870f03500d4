import { describe, expect, it } from 'vitest';
import type { PushMetricExporter } from '@opentelemetry/sdk-metrics';
import { MetricsSink } from '../../../../src/otel/metrics/metrics-sink.js';
import { ExportFailures } from '../../../../src/otel/metrics/daemon-readings.js';
import { loadMetricsConfig } from '../../../../src/otel/metrics/metrics-config.js';
import type { Logger } from '../../../../src/core/logger.js';

/** An exporter that fails while `failing` is set. */
function flaky() {
  const state = { failing: true, exports: 0 };
  const exporter: PushMetricExporter = {
    export: (_m, done) => {
      state.exports++;
      done(state.failing ? { code: 1, error: Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }) } : { code: 0 });
    },
    forceFlush: () => Promise.resolve(),
    shutdown: () => Promise.resolve(),
  };
  return { state, exporter };
}

describe('metrics export health', () => {
  it('degrades on a failed export with one line, recovers with one, and counts the failures for aep.export.failures', async () => {
    const lines: string[] = [];
    const log = {
      error: (m: string) => lines.push(`error ${m}`),
      info: (m: string) => lines.push(`info ${m}`),
      warn: () => {},
      debug: () => {},
    } as unknown as Logger;
    const { state, exporter } = flaky();
    const failures = new ExportFailures();
    const config = loadMetricsConfig({ OTEL_METRICS_EXPORTER: 'otlp', OTEL_METRIC_EXPORT_INTERVAL: '3600000' });
    const sink = new MetricsSink({ config, exporter: () => Promise.resolve(exporter), version: 'test', exportFailures: failures, log });
    await sink.flush();
    await sink.flush();
    expect(sink.health()).toMatchObject({ sink: 'metrics', reason: 'metrics export failed: ECONNREFUSED' });
    expect(failures.read()).toEqual([['metrics', 2]]);
    state.failing = false;
    await sink.flush();
    expect(sink.health()).toBeUndefined();
    expect(lines).toEqual(['error metrics cannot be exported: /healthz is degraded until an export succeeds', 'info metrics are exported again']);
    expect(sink.stats()).toMatchObject({ exports_ok: 1, exports_failed: 2, last_error: 'ECONNREFUSED' });
    await sink.shutdown();
  });

  it('holds what is measured before the SDK loads, and counts what it cannot hold', async () => {
    const config = loadMetricsConfig({ OTEL_METRICS_EXPORTER: 'otlp', OTEL_METRIC_EXPORT_INTERVAL: '3600000' });
    const sink = new MetricsSink({ config, exporter: () => Promise.resolve(flaky().exporter), version: 'test' });
    const ev = { type: 'session.started', time: '2026-01-01T00:00:00.000Z', session: 's', id: 'e', agent: 'hermes', data: {} } as never;
    sink.consume(Array.from({ length: 10_005 }, () => ev));
    expect(sink.stats()).toMatchObject({ early_queued: 10_000, early_dropped: 5 });
    await sink.start();
    expect(sink.stats()).toMatchObject({ early_queued: 0, early_dropped: 5 });
    await sink.shutdown();
  });
});
