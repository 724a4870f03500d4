import type { PushMetricExporter } from '@opentelemetry/sdk-metrics';
import type { OtlpProtocol } from '../otel-env.js';
import type { MetricsConfig, TemporalityPreference } from './metrics-config.js';

/** `AggregationTemporalityPreference` of the OTLP metric exporters, without loading one to read it */
const PREFERENCE = { delta: 0, cumulative: 1, lowmemory: 2 } as const satisfies Record<TemporalityPreference, number>;

/**
 * The metric exporter chosen (`OTEL_METRICS_EXPORTER`, and for `otlp` its
 * protocol), imported only now: the metrics side loads once the daemon
 * listens, never while it starts. The OTLP ones read their own endpoint
 * (`/v1/metrics` appended to OTEL_EXPORTER_OTLP_ENDPOINT, or
 * OTEL_EXPORTER_OTLP_METRICS_ENDPOINT as is), headers, timeout and
 * compression; the temporality is passed (the reader aggregates by it).
 */
export async function createMetricExporter(config: MetricsConfig): Promise<PushMetricExporter | undefined> {
  switch (config.exporter) {
    case 'none':
      return undefined;
    case 'console':
      return new (await import('@opentelemetry/sdk-metrics')).ConsoleMetricExporter();
    case 'otlp':
      return otlpMetricExporter(config.protocol, config.temporality);
  }
}

export async function otlpMetricExporter(protocol: OtlpProtocol, temporality: TemporalityPreference): Promise<PushMetricExporter> {
  const options = { temporalityPreference: PREFERENCE[temporality] };
  switch (protocol) {
    case 'http/protobuf':
      return new (await import('@opentelemetry/exporter-metrics-otlp-proto')).OTLPMetricExporter(options);
    case 'http/json':
      return new (await import('@opentelemetry/exporter-metrics-otlp-http')).OTLPMetricExporter(options);
    case 'grpc':
      return new (await import('@opentelemetry/exporter-metrics-otlp-grpc')).OTLPMetricExporter(options);
  }
}
