import type { ExportResult, ExportResultCode } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';

/** `ExportResultCode.FAILED`, without loading @opentelemetry/core at start */
const FAILED = 1 as ExportResultCode.FAILED;

/**
 * An exporter imported and built in the background once the mirror starts,
 * never while the daemon starts: an OTLP exporter is 150-250 ms of imports
 * (the gRPC one the most). A failed import fails each export (counted,
 * /healthz degraded), as an unreachable collector does.
 */
export class DeferredExporter implements SpanExporter {
  private loaded: Promise<SpanExporter> | undefined;

  constructor(private readonly importer: () => Promise<SpanExporter>) {}

  /** Import and build the exporter (once). */
  load(): Promise<SpanExporter> {
    return (this.loaded ??= this.importer());
  }

  export(spans: ReadableSpan[], done: (r: ExportResult) => void): void {
    this.load().then(
      (e) => e.export(spans, done),
      (err: unknown) => done({ code: FAILED, error: err instanceof Error ? err : new Error(String(err)) }),
    );
  }

  async forceFlush(): Promise<void> {
    const e = await this.loaded?.catch(() => undefined);
    await e?.forceFlush?.();
  }

  async shutdown(): Promise<void> {
    const e = await this.loaded?.catch(() => undefined);
    await e?.shutdown();
  }
}
