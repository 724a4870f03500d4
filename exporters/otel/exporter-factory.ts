import type { SpanExporter } from '@opentelemetry/sdk-trace';
import type { OtelConfig } from './otel-config.js';

/**
 * Loads only the exporter chosen: the OTLP/HTTP exporter reads its endpoint,
 * headers and timeout from the standard `OTEL_EXPORTER_OTLP_*` variables.
 */
export async function createExporter(config: OtelConfig): Promise<SpanExporter | undefined> {
  switch (config.exporter) {
    case 'none':
      return undefined;
    case 'otlp': {
      if (config.protocol === 'http/protobuf') {
        const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-proto');
        return new OTLPTraceExporter();
      }
      const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
      return new OTLPTraceExporter();
    }
    case 'file': {
      const { FileSpanExporter } = await import('./file-span-exporter.js');
      return new FileSpanExporter(config.file);
    }
  }
}
