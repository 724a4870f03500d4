import type { InstrumentationScope } from '@opentelemetry/core';
import { detectResources, envDetector, resourceFromAttributes, type Resource } from '@opentelemetry/resources';
import { BatchSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { AepEvent } from '../../src/aep/event.js';
import type { EventSink } from '../../src/sinks/sink.js';
import { CountingExporter } from './counting-exporter.js';
import { traceparent } from './ids.js';
import type { OtelConfig } from './otel-config.js';
import { toReadableSpan } from './readable-span.js';
import type { TraceSampler } from './sampler.js';
import { SpanBuilder } from './span-builder.js';
import type { SpanRecord } from './span-record.js';
import type { BuilderState } from './builder-state.js';

export interface MirrorOptions {
  readonly config: OtelConfig;
  readonly exporter: SpanExporter;
  readonly sampler: TraceSampler;
  readonly version: string;
  readonly now?: () => number;
}

/**
 * The OpenTelemetry mirror, as the FIRST sink on the bus: it stamps each
 * event's `traceparent` (later sinks serialize it), feeds the span builder,
 * and hands finished spans to the SDK's batch processor. Nothing here awaits
 * export; the processor's queue is bounded and every span lost is counted.
 */
export class OtelMirror implements EventSink {
  readonly name = 'otel';
  readonly builder: SpanBuilder;
  private readonly exporter: CountingExporter;
  private readonly processor: BatchSpanProcessor;
  private readonly resource: Resource;
  private readonly scope: InstrumentationScope;
  private readonly now: () => number;
  private handed = 0;
  private droppedQueueFull = 0;
  private sampledOut = 0;
  private replayed = 0;
  private replayDiscarded = 0;
  private timer: NodeJS.Timeout | undefined;
  private shut: Promise<void> | undefined;

  constructor(private readonly opts: MirrorOptions) {
    this.builder = new SpanBuilder({ sampler: opts.sampler, ceiling: opts.config.ceiling, maxOpenUnits: opts.config.maxOpenUnits });
    this.exporter = new CountingExporter(opts.exporter);
    this.processor = new BatchSpanProcessor(this.exporter, opts.config.batch);
    this.resource = resourceFromAttributes({ 'service.name': 'hermes-aep', 'service.version': opts.version }).merge(
      detectResources({ detectors: [envDetector] }),
    );
    this.scope = { name: 'hermes-aep', version: opts.version };
    this.now = opts.now ?? Date.now;
  }

  /**
   * Start the idle sweep. Units the restore left idle are dropped, not
   * exported: the previous process may already have closed and exported them
   * (same ids), and a duplicate span is worse than a missing one.
   */
  start(): void {
    this.replayDiscarded += this.builder.sweep(this.now(), this.opts.config.idleMs).length;
    const every = Math.max(1_000, Math.min(60_000, Math.floor(this.opts.config.idleMs / 4)));
    this.timer = setInterval(() => this.enqueue(this.builder.sweep(this.now(), this.opts.config.idleMs)), every);
    this.timer.unref();
  }

  write(events: readonly AepEvent[]): void {
    for (const ev of events) {
      const { ctx, finished } = this.builder.accept(ev);
      if (ctx) ev.traceparent = traceparent(ctx.traceId, ctx.spanId, ctx.sampled);
      this.enqueue(finished);
    }
  }

  private enqueue(records: readonly SpanRecord[]): void {
    for (const r of records) {
      if (!r.sampled) {
        this.sampledOut++;
        continue;
      }
      // the processor's own buffer drops silently past maxQueueSize: refuse first, and count
      if (this.handed - this.exporter.received >= this.opts.config.batch.maxQueueSize) {
        this.droppedQueueFull++;
        continue;
      }
      this.handed++;
      this.processor.onEnd(toReadableSpan(r, this.resource, this.scope));
    }
  }

  /**
   * Take one event from the durable log of a previous process: rebuilds the
   * units it left open, so a run that started before a restart ends as ONE
   * root span with its real start and timeline. Units that finish during the
   * replay are discarded: the previous process exported them.
   */
  restore(ev: AepEvent): void {
    this.builder.accept(ev);
    this.replayed++;
  }

  /** What the span builder's memory depends on besides the log: a snapshot taken under another value is not loaded. */
  get stateFingerprint(): string {
    return `capture=${this.opts.config.ceiling}`;
  }

  /** The builder's memory, for the start-up snapshot. */
  saveState(): BuilderState {
    return this.builder.saveState();
  }

  /**
   * Take back a snapshot's memory, before `start()`; the log written past the
   * snapshot then comes through `restore` as in a replay.
   */
  loadState(state: BuilderState, keep?: (session: string) => boolean): void {
    this.builder.loadState(state, keep);
  }

  flush(): Promise<void> {
    return this.processor.forceFlush();
  }

  shutdown(): Promise<void> {
    this.shut ??= (async () => {
      if (this.timer) clearInterval(this.timer);
      // open units are NOT exported here: the next start rebuilds them from the log
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<void>((r) => {
        timer = setTimeout(r, this.opts.config.shutdownTimeoutMs);
        timer.unref();
      });
      await Promise.race([this.processor.shutdown().catch(() => undefined), deadline]);
      if (timer) clearTimeout(timer);
    })();
    return this.shut;
  }

  stats(): Record<string, number | boolean | string> {
    const e = this.exporter;
    return {
      exporter: this.opts.config.exporter,
      open_units: this.builder.openUnits,
      spans_finished: this.builder.counters.finished,
      spans_incomplete: this.builder.counters.incomplete,
      spans_sampled_out: this.sampledOut,
      spans_queued: this.handed - e.received,
      spans_exported: e.exported,
      spans_failed: e.failed,
      spans_dropped_queue_full: this.droppedQueueFull,
      spans_dropped: e.failed + this.droppedQueueFull,
      replayed_events: this.replayed,
      replay_discarded_units: this.replayDiscarded,
      late_events: this.builder.counters.late,
      ...(e.lastError ? { last_error: e.lastError } : {}),
    };
  }
}
