import { describe, expect, it } from 'vitest';
import { loadMetricsConfig } from '../../../../src/otel/metrics/metrics-config.js';
import { configError } from '../../../support/config-error.js';

describe('metrics settings', () => {
  it('is off without an endpoint, OTLP over http/protobuf with one', () => {
    expect(loadMetricsConfig({})).toMatchObject({ exporter: 'none', temporality: 'cumulative', intervalMs: 60_000, timeoutMs: 30_000 });
    expect(loadMetricsConfig({ OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: 'http://c:4318/v1/metrics' })).toMatchObject({
      exporter: 'otlp',
      protocol: 'http/protobuf',
    });
    expect(loadMetricsConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_METRICS_EXPORTER: 'none' }).exporter).toBe('none');
  });

  it('takes the metrics-specific protocol over the generic one, and an interval the timeout follows', () => {
    const c = loadMetricsConfig({
      OTEL_METRICS_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
      OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: 'http/json',
      OTEL_METRIC_EXPORT_INTERVAL: '1000',
    });
    expect([c.protocol, c.intervalMs, c.timeoutMs]).toEqual(['http/json', 1000, 1000]);
    expect(loadMetricsConfig({ OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: 'Delta' }).temporality).toBe('delta');
  });

  it('stops on a bad value, naming the variable', () => {
    expect(configError(() => loadMetricsConfig({ OTEL_METRICS_EXPORTER: 'prometheus' })).variables).toEqual(['OTEL_METRICS_EXPORTER']);
    expect(configError(() => loadMetricsConfig({ OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: 'sometimes' })).variables).toEqual([
      'OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE',
    ]);
    expect(configError(() => loadMetricsConfig({ OTEL_METRIC_EXPORT_INTERVAL: '1000', OTEL_METRIC_EXPORT_TIMEOUT: '5000' })).variables).toEqual([
      'OTEL_METRIC_EXPORT_TIMEOUT',
    ]);
    const grpc = { OTEL_METRICS_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: 'grpc', OTEL_EXPORTER_OTLP_METRICS_HEADERS: 'Bad Key=v' };
    expect(configError(() => loadMetricsConfig(grpc)).variables).toEqual(['OTEL_EXPORTER_OTLP_METRICS_HEADERS']);
  });
});
