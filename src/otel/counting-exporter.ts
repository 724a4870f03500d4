import type { ExportResult, ExportResultCode } from '@opentelemetry/core';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { errorCode } from '../core/health-latch.js';

/** `ExportResultCode.SUCCESS` / `FAILED`, without loading @opentelemetry/core at start */
const SUCCESS = 0 as ExportResultCode.SUCCESS;
const FAILED = 1 as ExportResultCode.FAILED;

/** What the SDK's span and log record exporters have in common: the shape a counting wrapper needs. */
export interface ItemExporter<T> {
  export(items: T[], done: (r: ExportResult) => void): void;
  forceFlush?(): Promise<void>;
  shutdown(): Promise<void>;
}

/**
 * Wraps an exporter (spans by default; log records for the log bridge) to count what reached it, what it
 * delivered, and what it lost; `onResult` hears each outcome. The batch processors drop silently: what was
 * handed to one minus `received` is what it still holds. An exporter that throws counts as a failed export.
 */
export class CountingExporter<T = ReadableSpan> implements ItemExporter<T> {
  received = 0;
  exported = 0;
  failed = 0;
  /** export requests that failed (the `aep.export.failures` metric) */
  failedRequests = 0;
  lastError: string | undefined;

  constructor(
    readonly inner: ItemExporter<T>,
    private readonly onResult?: (ok: boolean, error?: string) => void,
  ) {}

  export(items: T[], done: (r: ExportResult) => void): void {
    this.received += items.length;
    const settle = (r: ExportResult) => {
      if (r.code === SUCCESS) {
        this.exported += items.length;
        this.onResult?.(true);
      } else {
        this.failed += items.length;
        this.failedRequests++;
        // the class of failure only: exporter errors can quote endpoints, never content
        this.lastError = r.error?.name ?? 'export failed';
        this.onResult?.(false, errorCode(r.error));
      }
      done(r);
    };
    try {
      this.inner.export(items, settle);
    } catch (err) {
      settle({ code: FAILED, error: err instanceof Error ? err : new Error('export threw') });
    }
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }
}
