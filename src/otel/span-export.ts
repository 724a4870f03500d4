import type { InstrumentationScope } from '@opentelemetry/core';
import type { BatchSpanProcessor, ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';
import { HealthLatch, type Degradation } from '../core/health-latch.js';
import { silentLogger, type Logger } from '../core/logger.js';
import { RESOURCE_ATTR } from './attribute-catalogue.js';
import { CountingExporter } from './counting-exporter.js';
import { DeferredExporter } from './deferred-exporter.js';
import type { OtelConfig } from './otel-config.js';
import type { SpanRecord } from './span-record.js';

/**
 * How long after a turn's root span ends its spans are exported: long enough
 * that turns ending together (and the spans their ends close) share one
 * export, far below the batch processor's own timer (5 s by default).
 */
const TURN_END_FLUSH_MS = 25;

export interface SpanExportOptions {
  readonly config: OtelConfig;
  readonly exporter: SpanExporter;
  readonly version: string;
  /** where the one line at the first failed export, and the one at recovery, go */
  readonly log?: Logger;
}

/**
 * The export side of the mirror: finished span records to the SDK's batch
 * processor and exporter. The SDK (~200 modules) is loaded once the mirror
 * starts, not while the daemon starts; spans finished before are held
 * (counted as handed, bounded like the queue). Nothing here awaits export;
 * the processor's queue is bounded and every span lost is counted.
 */
export class SpanExport {
  private readonly exporter: CountingExporter;
  private side: { processor: BatchSpanProcessor; toReadable: (r: SpanRecord) => ReadableSpan } | undefined;
  private loading: Promise<NonNullable<SpanExport['side']>> | undefined;
  private early: SpanRecord[] = [];
  private readonly scope: InstrumentationScope;
  private readonly latch: HealthLatch;
  private handed = 0;
  private droppedQueueFull = 0;
  private sampledOut = 0;
  /** a flush scheduled by a turn's end (one at a time) */
  private turnFlush: NodeJS.Timeout | undefined;
  /** exports started because a turn ended, not by the batch timer */
  private turnFlushes = 0;

  constructor(private readonly opts: SpanExportOptions) {
    this.latch = new HealthLatch('otel', opts.log ?? silentLogger, {
      failing: 'spans cannot be exported: they are dropped and counted until an export succeeds; /healthz is degraded',
      recovered: 'spans are exported again',
    });
    // an export that fails degrades /healthz until the next one succeeds (spans lost meanwhile are counted)
    this.exporter = new CountingExporter(opts.exporter, (ok, code) =>
      ok ? this.latch.recover('export', { spans_failed: this.exporter.failed }) : this.latch.fail('export', `otel export failed: ${code ?? 'unknown'}`),
    );
    this.scope = { name: 'hermes-aep', version: opts.version };
  }

  /** Load the SDK, and a deferred exporter, in the background. */
  start(): void {
    this.exportSide().catch(() => undefined);
    // a failed import fails the exports instead (counted, /healthz degraded)
    if (this.opts.exporter instanceof DeferredExporter) this.opts.exporter.load().catch(() => undefined);
  }

  private exportSide(): Promise<NonNullable<SpanExport['side']>> {
    return (this.loading ??= (async () => {
      const [{ BatchSpanProcessor }, { detectResources, envDetector, resourceFromAttributes }, { toReadableSpan }] = await Promise.all([
        import('@opentelemetry/sdk-trace'),
        import('@opentelemetry/resources'),
        import('./readable-span.js'),
      ]);
      const resource = resourceFromAttributes({ [RESOURCE_ATTR.serviceName]: 'hermes-aep', [RESOURCE_ATTR.serviceVersion]: this.opts.version }).merge(
        detectResources({ detectors: [envDetector] }),
      );
      const processor = new BatchSpanProcessor({ exporter: this.exporter, ...this.opts.config.batch });
      this.side = { processor, toReadable: (r) => toReadableSpan(r, resource, this.scope) };
      for (const r of this.early.splice(0)) processor.onEnd(this.side.toReadable(r));
      return this.side;
    })());
  }

  enqueue(records: readonly SpanRecord[]): void {
    for (const r of records) {
      if (!r.sampled) {
        this.sampledOut++;
        continue;
      }
      // a root span (a turn) ended: its trace is whole, so export it now rather than at the batch timer
      if (r.parentSpanId === undefined) this.exportSoon();
      // the processor's own buffer drops silently past maxQueueSize: refuse first, and count
      if (this.handed - this.exporter.received >= this.opts.config.batch.maxQueueSize) {
        this.droppedQueueFull++;
        continue;
      }
      this.handed++;
      if (this.side) this.side.processor.onEnd(this.side.toReadable(r));
      else {
        this.early.push(r);
        this.exportSide().catch(() => undefined);
      }
    }
  }

  /** Export what is queued shortly (once for everything that ends meanwhile), still through the bounded batch processor. */
  private exportSoon(): void {
    if (this.turnFlush) return;
    this.turnFlush = setTimeout(() => {
      this.turnFlush = undefined;
      this.turnFlushes++;
      this.exportSide()
        .then((s) => s.processor.forceFlush())
        .catch(() => undefined);
    }, TURN_END_FLUSH_MS);
    this.turnFlush.unref();
  }

  health(): Degradation | undefined {
    return this.latch.current();
  }

  flush(): Promise<void> {
    return this.exportSide().then((s) => s.processor.forceFlush());
  }

  /** Export what is queued, for at most the configured shutdown timeout. */
  async shutdown(): Promise<void> {
    this.latch.close();
    clearTimeout(this.turnFlush);
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((r) => {
      timer = setTimeout(r, this.opts.config.shutdownTimeoutMs);
      timer.unref();
    });
    await Promise.race([
      this.exportSide()
        .then((s) => s.processor.shutdown())
        .catch(() => undefined),
      deadline,
    ]);
    if (timer) clearTimeout(timer);
  }

  /** The export counters for `/healthz`. */
  stats(): Record<string, number> {
    const e = this.exporter;
    return {
      spans_sampled_out: this.sampledOut,
      spans_queued: this.handed - e.received,
      spans_exported: e.exported,
      spans_failed: e.failed,
      spans_dropped_queue_full: this.droppedQueueFull,
      spans_dropped: e.failed + this.droppedQueueFull,
      turn_end_exports: this.turnFlushes,
    };
  }

  /** Export requests that failed so far. */
  get failedRequests(): number {
    return this.exporter.failedRequests;
  }

  /** The class of the last failed export, if any. */
  get lastError(): string | undefined {
    return this.exporter.lastError;
  }
}
