import type { ExportResult, ExportResultCode } from '@opentelemetry/core';
import type { LogRecordExporter, ReadableLogRecord } from '@opentelemetry/sdk-logs';
import { CountingExporter } from '../counting-exporter.js';
import type { OtlpProtocol } from '../otel-env.js';

/** `ExportResultCode.FAILED`, without loading @opentelemetry/core at start */
const FAILED = 1 as ExportResultCode.FAILED;

/** The counting wrapper of the spans (counting-exporter.ts), over log records. */
export const CountingLogExporter = CountingExporter<ReadableLogRecord>;
export type CountingLogExporter = CountingExporter<ReadableLogRecord>;

/**
 * The OTLP log exporter, imported and built on first use, never while the
 * daemon starts. A failed import fails each export (counted, /healthz
 * degraded), as an unreachable collector does.
 */
export class DeferredLogExporter implements LogRecordExporter {
  private loaded: Promise<LogRecordExporter> | undefined;

  constructor(private readonly importer: () => Promise<LogRecordExporter>) {}

  load(): Promise<LogRecordExporter> {
    return (this.loaded ??= this.importer());
  }

  export(logs: ReadableLogRecord[], done: (r: ExportResult) => void): void {
    this.load().then(
      (e) => e.export(logs, done),
      (err: unknown) => done({ code: FAILED, error: err instanceof Error ? err : new Error('exporter import failed') }),
    );
  }

  async forceFlush(): Promise<void> {
    const e = await this.loaded?.catch(() => undefined);
    await e?.forceFlush();
  }

  async shutdown(): Promise<void> {
    const e = await this.loaded?.catch(() => undefined);
    await e?.shutdown();
  }
}

/**
 * The official OTLP log exporter of each protocol, imported only when chosen.
 * Each reads its own standard variables (OTEL_EXPORTER_OTLP_LOGS_* over
 * OTEL_EXPORTER_OTLP_*): the HTTP ones send to `{endpoint}/v1/logs`
 * (http://localhost:4318/v1/logs by default), the gRPC one to localhost:4317.
 */
export async function otlpLogExporter(protocol: OtlpProtocol): Promise<LogRecordExporter> {
  switch (protocol) {
    case 'http/protobuf':
      return new (await import('@opentelemetry/exporter-logs-otlp-proto')).OTLPLogExporter();
    case 'http/json':
      return new (await import('@opentelemetry/exporter-logs-otlp-http')).OTLPLogExporter();
    case 'grpc':
      return new (await import('@opentelemetry/exporter-logs-otlp-grpc')).OTLPLogExporter();
  }
}
