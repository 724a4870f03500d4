export { OtelMirror, type MirrorOptions } from './otel-mirror.js';
export { loadOtelConfig, type OtelConfig, type ExporterKind } from './otel-config.js';
export { createExporter } from './exporter-factory.js';
export { createSampler, samplerFromEnv, type SamplerSpec, type TraceSampler } from './sampler.js';
export { SpanContextStage, type SpanContextSource } from './span-context-stage.js';
export { SpanBuilder, type SpanCtx, type BuilderOptions } from './span-builder.js';
export type { SpanRecord } from './span-record.js';
export { traceIdFor, runSpanId, toolSpanId, cardSpanId, delegationSpanId, traceparent } from './ids.js';
