import type { SpanExporter } from '@opentelemetry/sdk-trace';
import { DeferredExporter } from './deferred-exporter.js';
import type { OtelConfig } from './otel-config.js';
import type { OtlpProtocol } from './otel-env.js';

/**
 * Loads only the exporter chosen (`OTEL_TRACES_EXPORTER`, and for `otlp` its
 * protocol); an OTLP one is imported once the mirror starts, not here.
 */
export async function createExporter(config: OtelConfig): Promise<SpanExporter | undefined> {
  switch (config.exporter) {
    case 'none':
      return undefined;
    case 'otlp':
      return new DeferredExporter(() => otlpExporter(config.protocol));
    case 'file': {
      const { FileSpanExporter } = await import('./file-span-exporter.js');
      return new FileSpanExporter(config.file);
    }
  }
}

/**
 * The official OTLP exporter of each protocol, as @opentelemetry/sdk-node
 * picks it (its picker is not exported), imported only when chosen. Each
 * reads its own standard variables: endpoint, headers, timeout, compression.
 * Without an endpoint the HTTP ones send to http://localhost:4318/v1/traces
 * (`/v1/traces` appended to OTEL_EXPORTER_OTLP_ENDPOINT), the gRPC one to
 * localhost:4317 (the endpoint's host and port only; `http://` is plaintext,
 * `https://` TLS).
 */
export async function otlpExporter(protocol: OtlpProtocol): Promise<SpanExporter> {
  switch (protocol) {
    case 'http/protobuf':
      return new (await import('@opentelemetry/exporter-trace-otlp-proto')).OTLPTraceExporter();
    case 'http/json':
      return new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter();
    case 'grpc':
      return new (await import('@opentelemetry/exporter-trace-otlp-grpc')).OTLPTraceExporter();
  }
}
