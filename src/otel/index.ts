/**
 * The one door into src/otel/ (traces, logs and metrics): every other folder
 * imports OpenTelemetry's side of the daemon from here, never a file inside.
 * Tests may reach the files themselves.
 */
// the OTLP exporter variables of the three signals
export { OTLP_PROTOCOLS, readSignalSettings, SIGNALS, type OtlpProtocol, type Signal, type SignalSettings } from './otel-env.js';

// traces: the mirror, its settings and exporter, span context
export { OtelMirror, type MirrorOptions } from './otel-mirror.js';
export { loadOtelConfig, type OtelConfig, type ExporterKind } from './otel-config.js';
export { createExporter } from './exporter-factory.js';
export { createSampler, samplerFromEnv, type SamplerSpec, type TraceSampler } from './sampler.js';
export { SpanContextStage, type SpanContextSource } from './span-context-stage.js';
export { SpanBuilder, type SpanCtx, type BuilderOptions } from './span-builder.js';
export type { SpanRecord } from './span-record.js';
export { traceIdFor, runSpanId, toolSpanId, cardSpanId, delegationSpanId, traceparent } from './ids.js';
// the span builder's open units, as the snapshot writes and restores them
export { builderStateJson, checkBuilderState, type BuilderState } from './builder-state.js';

// logs: the AEP log bridge
export { AepLogSink, type LogSinkOptions } from './logs/log-sink.js';
export { loadLogsConfig, type LogsConfig } from './logs/logs-config.js';
export { CountingLogExporter, DeferredLogExporter, otlpLogExporter } from './logs/log-exporter.js';
export { toLogRecord, type AepLogRecord, type BridgeEvent } from './logs/log-record.js';

// metrics
export { METRICS_SHUTDOWN_MS, MetricsSink, type MetricsSinkOptions } from './metrics/metrics-sink.js';
export { loadMetricsConfig, type MetricsConfig } from './metrics/metrics-config.js';
export { ExportFailures, type DaemonReadings } from './metrics/daemon-readings.js';
