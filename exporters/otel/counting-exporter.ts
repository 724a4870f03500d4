import type { ExportResult, ExportResultCode } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';
import { errorCode } from '../../src/sinks/health-latch.js';

/** `ExportResultCode.SUCCESS`, without loading @opentelemetry/core at start */
const SUCCESS = 0 as ExportResultCode.SUCCESS;

/** Wraps an exporter to count what reached it, what it delivered, and what it lost; `onResult` hears each outcome. */
export class CountingExporter implements SpanExporter {
  received = 0;
  exported = 0;
  failed = 0;
  /** export requests that failed (the `aep.export.failures` metric) */
  failedRequests = 0;
  lastError: string | undefined;

  constructor(
    readonly inner: SpanExporter,
    private readonly onResult?: (ok: boolean, error?: string) => void,
  ) {}

  export(spans: ReadableSpan[], done: (r: ExportResult) => void): void {
    this.received += spans.length;
    this.inner.export(spans, (r) => {
      if (r.code === SUCCESS) {
        this.exported += spans.length;
        this.onResult?.(true);
      } else {
        this.failed += spans.length;
        this.failedRequests++;
        // the class of failure only: exporter errors can quote endpoints, never content
        this.lastError = r.error?.name ?? 'export failed';
        this.onResult?.(false, errorCode(r.error));
      }
      done(r);
    });
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }
}
