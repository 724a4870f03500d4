import type { Context, Logger as OtelLogger } from '@opentelemetry/api';
import type { LoggerProvider, LogRecordExporter } from '@opentelemetry/sdk-logs';
import type { AepEvent } from '../../aep/event.js';
import type { Consumer, Reporting } from '../../bus/consumer.js';
import { errorCode, HealthLatch, type Degradation } from '../../core/health-latch.js';
import { silentLogger, type Logger } from '../../core/logger.js';
import { RESOURCE_ATTR } from '../attribute-catalogue.js';
import { CountingLogExporter, DeferredLogExporter } from './log-exporter.js';
import { toLogRecord, type AepLogRecord, type BridgeEvent } from './log-record.js';
import type { LogsConfig } from './logs-config.js';

export interface LogSinkOptions {
  readonly config: LogsConfig;
  readonly exporter: LogRecordExporter;
  /** the emitting agent: the resource's `service.name` unless OTEL_SERVICE_NAME says otherwise */
  readonly agent: string;
  readonly version: string;
  /** where the one line at the first failed export, and the one at recovery, go */
  readonly log?: Logger;
}

interface SdkSide {
  readonly provider: LoggerProvider;
  readonly logger: OtelLogger;
  /** the context carrying an event's trace fields, for the SDK to copy onto its record */
  readonly contextOf: (r: AepLogRecord) => Context;
}

const NANOS = 1_000_000_000n;

/**
 * The AEP log bridge (AEP-0005 §3): every live event of this daemon, as it
 * reaches the bus after its durable write, becomes one OTLP LogRecord through the SDK's
 * LoggerProvider and BatchLogRecordProcessor. Its fields come from the pure
 * projection (log-record.ts), its trace fields from the event's traceparent.
 * Events re-read from the history at start never reach the bus, so nothing is
 * exported twice. `consume` never throws and never waits: the SDK (and the
 * exporter) load in the background; the queue is bounded, and every record
 * not delivered is counted.
 */
export class AepLogSink implements Consumer, Reporting {
  readonly name = 'otel-logs';
  private readonly exporter: CountingLogExporter;
  private readonly latch: HealthLatch;
  private side: SdkSide | undefined;
  private loading: Promise<SdkSide> | undefined;
  private early: AepLogRecord[] = [];
  private handed = 0;
  private droppedQueueFull = 0;
  private droppedLoadFailed = 0;
  private droppedAfterShutdown = 0;
  private mappingErrors = 0;
  private loadFailed = false;
  private closed = false;
  private shut: Promise<void> | undefined;

  constructor(private readonly opts: LogSinkOptions) {
    this.latch = new HealthLatch('otel-logs', opts.log ?? silentLogger, {
      failing: 'AEP log records cannot be exported: they are dropped and counted until an export succeeds; /healthz is degraded',
      recovered: 'AEP log records are exported again',
    });
    this.exporter = new CountingLogExporter(opts.exporter, (ok, code) =>
      ok ? this.latch.recover('export', { records_failed: this.exporter.failed }) : this.latch.fail('export', `otlp log export failed: ${code ?? 'unknown'}`),
    );
  }

  /** Load the SDK, and a deferred exporter, in the background. */
  start(): void {
    this.sdk().catch(() => undefined);
    if (this.opts.exporter instanceof DeferredLogExporter) this.opts.exporter.load().catch(() => undefined);
  }

  private sdk(): Promise<SdkSide> {
    return (this.loading ??= (async () => {
      const [{ BatchLogRecordProcessor, LoggerProvider }, { detectResources, envDetector, resourceFromAttributes }, api] = await Promise.all([
        import('@opentelemetry/sdk-logs'),
        import('@opentelemetry/resources'),
        import('@opentelemetry/api'),
      ]);
      // AEP-0005 §3.2: the resource is the emitting agent; OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES override as for the spans
      const resource = resourceFromAttributes({ [RESOURCE_ATTR.serviceName]: this.opts.agent }).merge(detectResources({ detectors: [envDetector] }));
      const processor = new BatchLogRecordProcessor({ exporter: this.exporter, ...this.opts.config.batch });
      const provider = new LoggerProvider({ resource, processors: [processor] });
      const logger = provider.getLogger('hermes-aep', this.opts.version);
      const contextOf = (r: AepLogRecord): Context =>
        r.trace_id !== undefined && r.span_id !== undefined
          ? api.trace.setSpanContext(api.ROOT_CONTEXT, { traceId: r.trace_id, spanId: r.span_id, traceFlags: r.flags ?? 0, isRemote: true })
          : api.ROOT_CONTEXT;
      const side: SdkSide = { provider, logger, contextOf };
      this.side = side;
      for (const r of this.early.splice(0)) this.emit(side, r);
      return side;
    })().catch((err: unknown) => {
      // the SDK did not load: what waits, and what comes, is lost (counted), /healthz says why
      this.loadFailed = true;
      const waiting = this.early.splice(0).length;
      this.handed -= waiting;
      this.droppedLoadFailed += waiting;
      this.latch.fail('load', `otel logs sdk failed to load: ${errorCode(err)}`);
      throw err;
    }));
  }

  private emit(side: SdkSide, r: AepLogRecord): void {
    side.logger.emit({
      eventName: r.event_name,
      timestamp: [Number(r.time_unix_nano / NANOS), Number(r.time_unix_nano % NANOS)],
      severityNumber: r.severity_number,
      severityText: r.severity_text,
      attributes: r.attributes,
      ...(r.body !== undefined ? { body: r.body } : {}),
      context: side.contextOf(r),
    });
  }

  consume(events: readonly AepEvent[]): void {
    for (const ev of events) {
      if (this.closed) {
        this.droppedAfterShutdown++;
        continue;
      }
      if (this.loadFailed) {
        this.droppedLoadFailed++;
        continue;
      }
      // the processor's own buffer drops silently past maxQueueSize: refuse first, and count
      if (this.handed - this.exporter.received >= this.opts.config.batch.maxQueueSize) {
        this.droppedQueueFull++;
        continue;
      }
      let record: AepLogRecord;
      try {
        record = toLogRecord(ev as unknown as BridgeEvent, this.opts.config.ceiling);
      } catch {
        this.mappingErrors++;
        continue;
      }
      this.handed++;
      if (this.side) {
        try {
          this.emit(this.side, record);
        } catch {
          this.handed--;
          this.mappingErrors++;
        }
      } else {
        this.early.push(record);
        this.sdk().catch(() => undefined);
      }
    }
  }

  health(): Degradation | undefined {
    return this.latch.current();
  }

  async flush(): Promise<void> {
    const side = await this.sdk().catch(() => undefined);
    await side?.provider.forceFlush();
  }

  /** Export what is queued, for at most AEP_OTEL_SHUTDOWN_TIMEOUT_MS; later writes are counted as dropped. */
  shutdown(): Promise<void> {
    this.shut ??= (async () => {
      this.closed = true;
      this.latch.close();
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<void>((r) => {
        timer = setTimeout(r, this.opts.config.shutdownTimeoutMs);
        timer.unref();
      });
      await Promise.race([
        this.sdk()
          .then((s) => s.provider.shutdown())
          .catch(() => undefined),
        deadline,
      ]);
      if (timer) clearTimeout(timer);
    })();
    return this.shut;
  }

  /** failed export requests, for aep.export.failures */
  get exportFailures(): number {
    return this.exporter.failedRequests;
  }

  stats(): Record<string, number | boolean | string> {
    const e = this.exporter;
    const dropped = e.failed + this.droppedQueueFull + this.droppedLoadFailed + this.droppedAfterShutdown + this.mappingErrors;
    return {
      exporter: this.opts.config.exporter,
      protocol: this.opts.config.protocol,
      capture: this.opts.config.ceiling,
      records_queued: this.handed - e.received,
      records_exported: e.exported,
      records_failed: e.failed,
      records_dropped_queue_full: this.droppedQueueFull,
      ...(this.droppedLoadFailed ? { records_dropped_sdk_not_loaded: this.droppedLoadFailed } : {}),
      ...(this.droppedAfterShutdown ? { records_dropped_after_shutdown: this.droppedAfterShutdown } : {}),
      ...(this.mappingErrors ? { records_unmappable: this.mappingErrors } : {}),
      records_dropped: dropped,
      ...(e.lastError ? { last_error: e.lastError } : {}),
    };
  }
}
