import type { ExportResult, ExportResultCode } from '@opentelemetry/core';
import type { LogRecordExporter, ReadableLogRecord } from '@opentelemetry/sdk-logs';
import { errorCode } from '../../../src/sinks/health-latch.js';
import type { OtlpProtocol } from '../otel-config.js';

/** `ExportResultCode.SUCCESS` / `FAILED`, without loading @opentelemetry/core at start */
const SUCCESS = 0 as ExportResultCode.SUCCESS;
const FAILED = 1 as ExportResultCode.FAILED;

/**
 * Wraps a log exporter to count what reached it, what it delivered and what
 * it lost (the batch processor drops silently: what was handed to it minus
 * `received` is what it still holds); `onResult` hears each outcome.
 */
export class CountingLogExporter implements LogRecordExporter {
  received = 0;
  exported = 0;
  failed = 0;
  /** export requests that failed (each may carry many records): what aep.export.failures counts */
  failedRequests = 0;
  lastError: string | undefined;

  constructor(
    readonly inner: LogRecordExporter,
    private readonly onResult?: (ok: boolean, code?: string) => void,
  ) {}

  export(logs: ReadableLogRecord[], done: (r: ExportResult) => void): void {
    this.received += logs.length;
    const settle = (r: ExportResult) => {
      if (r.code === SUCCESS) {
        this.exported += logs.length;
        this.onResult?.(true);
      } else {
        this.failed += logs.length;
        this.failedRequests++;
        // the class of failure only: exporter errors can quote endpoints, never content
        this.lastError = r.error?.name ?? 'export failed';
        this.onResult?.(false, errorCode(r.error));
      }
      done(r);
    };
    try {
      this.inner.export(logs, settle);
    } catch (err) {
      settle({ code: FAILED, error: err instanceof Error ? err : new Error('export threw') });
    }
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }
}

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
