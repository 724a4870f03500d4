import type { InstrumentationScope } from '@opentelemetry/core';
import type { BatchSpanProcessor, ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { AepEvent } from '../../src/aep/event.js';
import type { EventSink } from '../../src/sinks/sink.js';
import { HealthLatch, type Degradation } from '../../src/sinks/health-latch.js';
import { silentLogger, type Logger } from '../../src/daemon/log.js';
import { CountingExporter } from './counting-exporter.js';
import type { OtelConfig } from './otel-config.js';
import type { TraceSampler } from './sampler.js';
import { SpanBuilder, type SpanCtx } from './span-builder.js';
import type { SpanContextSource } from './span-context-stage.js';
import type { SpanRecord } from './span-record.js';
import type { BuilderCapture, BuilderState } from './builder-state.js';

/** how long after `start()` a deferred state begins to load in the background */
const BACKGROUND_LOAD_DELAY_MS = 100;

interface PendingState {
  readonly read: () => BuilderState;
  readonly keep: (session: string) => boolean;
  readonly rebuild: () => void;
  state?: BuilderState;
  loaded: boolean;
  readonly tail: AepEvent[];
  at: number;
}

export interface MirrorOptions {
  readonly config: OtelConfig;
  readonly exporter: SpanExporter;
  readonly sampler: TraceSampler;
  readonly version: string;
  readonly now?: () => number;
  /** where the one line at the first failed export, and the one at recovery, go */
  readonly log?: Logger;
}

/**
 * The OpenTelemetry mirror. Its span builder takes each event in the
 * pipeline's span context stage (`assign`, before the bus), and the spans an
 * event finishes go to the SDK's batch processor from there. On the bus it is
 * a sink like any other, for /healthz, flush and shutdown: it takes nothing
 * from `write`. Nothing here awaits export; the processor's queue is bounded
 * and every span lost is counted.
 */
export class OtelMirror implements EventSink, SpanContextSource {
  readonly name = 'otel';
  readonly builder: SpanBuilder;
  private readonly exporter: CountingExporter;
  /** the export side: the OTel SDK (~200 modules), loaded once the mirror starts, not while the daemon starts */
  private side: { processor: BatchSpanProcessor; toReadable: (r: SpanRecord) => ReadableSpan } | undefined;
  private loading: Promise<NonNullable<OtelMirror['side']>> | undefined;
  /** spans finished before the export side loaded (counted as handed, bounded like the queue) */
  private early: SpanRecord[] = [];
  private readonly scope: InstrumentationScope;
  private readonly now: () => number;
  private handed = 0;
  private droppedQueueFull = 0;
  private sampledOut = 0;
  private replayed = 0;
  private replayDiscarded = 0;
  private timer: NodeJS.Timeout | undefined;
  private shut: Promise<void> | undefined;
  private readonly latch: HealthLatch;
  /** a snapshot's state still to load, and the log events past it (see `deferState`) */
  private pending: PendingState | undefined;
  private started = false;
  /** the deferred state could not be read back: the logs were replayed instead */
  private stateRebuilt = false;

  constructor(private readonly opts: MirrorOptions) {
    this.builder = new SpanBuilder({ sampler: opts.sampler, ceiling: opts.config.ceiling, maxOpenUnits: opts.config.maxOpenUnits });
    this.latch = new HealthLatch('otel', opts.log ?? silentLogger, {
      failing: 'spans cannot be exported: they are dropped and counted until an export succeeds; /healthz is degraded',
      recovered: 'spans are exported again',
    });
    // an export that fails degrades /healthz until the next one succeeds (spans lost meanwhile are counted)
    this.exporter = new CountingExporter(opts.exporter, (ok, code) =>
      ok ? this.latch.recover('export', { spans_failed: this.exporter.failed }) : this.latch.fail('export', `otel export failed: ${code ?? 'unknown'}`),
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
    this.started = true;
    if (this.pending) this.loadInBackground();
    else this.replayDiscarded += this.builder.sweep(this.now(), this.opts.config.idleMs).length;
    const every = Math.max(1_000, Math.min(60_000, Math.floor(this.opts.config.idleMs / 4)));
    this.timer = setInterval(() => {
      this.settle();
      this.enqueue(this.builder.sweep(this.now(), this.opts.config.idleMs));
    }, every);
    this.timer.unref();
    this.exportSide().catch(() => undefined);
  }

  private exportSide(): Promise<NonNullable<OtelMirror['side']>> {
    return (this.loading ??= (async () => {
      const [{ BatchSpanProcessor }, { detectResources, envDetector, resourceFromAttributes }, { toReadableSpan }] = await Promise.all([
        import('@opentelemetry/sdk-trace-base'),
        import('@opentelemetry/resources'),
        import('./readable-span.js'),
      ]);
      const resource = resourceFromAttributes({ 'service.name': 'hermes-aep', 'service.version': this.opts.version }).merge(
        detectResources({ detectors: [envDetector] }),
      );
      const processor = new BatchSpanProcessor(this.exporter, this.opts.config.batch);
      this.side = { processor, toReadable: (r) => toReadableSpan(r, resource, this.scope) };
      for (const r of this.early.splice(0)) processor.onEnd(this.side.toReadable(r));
      return this.side;
    })());
  }

  /** One live event (the span context stage calls this): the spans it finishes go to export. */
  assign(ev: AepEvent): SpanCtx | undefined {
    this.settle();
    const { ctx, finished } = this.builder.accept(ev);
    this.enqueue(finished);
    return ctx;
  }

  /** The events already went through `assign`, in the stage before the bus. */
  write(): void {}

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
      if (this.side) this.side.processor.onEnd(this.side.toReadable(r));
      else {
        this.early.push(r);
        this.exportSide().catch(() => undefined);
      }
    }
  }

  /**
   * Take one event from the durable log of a previous process: rebuilds the
   * units it left open, so a run that started before a restart ends as ONE
   * root span with its real start and timeline. Units that finish during the
   * replay are discarded: the previous process exported them.
   */
  restore(ev: AepEvent): void {
    if (this.pending) {
      this.pending.tail.push(ev);
      return;
    }
    this.builder.accept(ev);
    this.replayed++;
  }

  health(): Degradation | undefined {
    return this.latch.current();
  }

  /**
   * Take back a snapshot's state LATER: nothing before the daemon listens
   * needs it (the identity stage does not depend on spans), so it is parsed,
   * checked and loaded after `start()` in a few slices between other work,
   * and at once the moment anything needs it (an event to map, a snapshot to
   * save). Events restored meanwhile (the log past the snapshot) queue behind
   * it, in order. If the state does not read back, `rebuild` replays the
   * logs into the builder instead (they hold everything the snapshot did).
   */
  deferState(read: () => BuilderState, keep: (session: string) => boolean, rebuild: () => void): void {
    if (this.pending || this.builder.openUnits > 0) throw new Error('deferState needs a mirror that has restored nothing yet');
    this.pending = { read, keep, rebuild, loaded: false, tail: [], at: 0 };
  }

  /** Whether a deferred state is still to load (for /healthz). */
  get stateLoading(): boolean {
    return this.pending !== undefined;
  }

  /** One slice of the deferred load; false when nothing is left. */
  private loadStep(): boolean {
    const p = this.pending;
    if (!p) return false;
    if (!p.loaded && !p.state) {
      try {
        p.state = p.read();
      } catch {
        // the snapshot's state is unusable: the logs are the truth (the queued tail is in them too)
        this.pending = undefined;
        this.stateRebuilt = true;
        p.rebuild();
        this.loaded();
        return false;
      }
      return true;
    }
    if (!p.loaded) {
      this.builder.loadState(p.state!, p.keep);
      p.loaded = true;
      delete p.state;
      return true;
    }
    const end = Math.min(p.tail.length, p.at + 1000);
    for (; p.at < end; p.at++) {
      this.builder.accept(p.tail[p.at]!);
      this.replayed++;
    }
    if (p.at < p.tail.length) return true;
    this.pending = undefined;
    this.loaded();
    return false;
  }

  private loaded(): void {
    // the start-up sweep (see start) runs once the restored units are all in
    if (this.started) this.replayDiscarded += this.builder.sweep(this.now(), this.opts.config.idleMs).length;
  }

  /** Finish a deferred load now. */
  private settle(): void {
    while (this.loadStep());
  }

  private loadInBackground(): void {
    const tick = () => {
      const t0 = performance.now();
      while (performance.now() - t0 < 10 && this.loadStep());
      if (this.pending) setImmediate(tick);
    };
    // a moment after the daemon listens, so its first answers do not wait behind it (a hook settles it at once)
    setTimeout(tick, BACKGROUND_LOAD_DELAY_MS).unref();
  }

  /** What the span builder's memory depends on besides the log: a snapshot taken under another value is not loaded. */
  get stateFingerprint(): string {
    return `capture=${this.opts.config.ceiling}`;
  }

  /** The builder's memory as data (tests compare it). */
  saveState(): BuilderState {
    this.settle();
    return this.builder.saveState();
  }

  /** The builder's memory captured at once, for the start-up snapshot (turned into JSON in slices by its writer). */
  captureState(): BuilderCapture {
    this.settle();
    return this.builder.captureState();
  }

  /**
   * Take back a snapshot's memory, before `start()`; the log written past the
   * snapshot then comes through `restore` as in a replay.
   */
  loadState(state: BuilderState, keep?: (session: string) => boolean): void {
    this.builder.loadState(state, keep);
  }

  flush(): Promise<void> {
    return this.exportSide().then((s) => s.processor.forceFlush());
  }

  shutdown(): Promise<void> {
    this.shut ??= (async () => {
      if (this.timer) clearInterval(this.timer);
      this.latch.close();
      // open units are NOT exported here: the next start rebuilds them from the log
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
      ...(this.pending ? { state_loading: true } : {}),
      ...(this.stateRebuilt ? { state_rebuilt_from_logs: true } : {}),
      replay_discarded_units: this.replayDiscarded,
      late_events: this.builder.counters.late,
      ...(e.lastError ? { last_error: e.lastError } : {}),
    };
  }
}
