import type { SpanExporter } from '@opentelemetry/sdk-trace';
import type { AepEvent } from '../aep/event.js';
import type { Consumer, Reporting } from '../bus/consumer.js';
import type { Degradation } from '../core/health-latch.js';
import type { Logger } from '../core/logger.js';
import type { BuilderCapture, BuilderState } from './builder-state.js';
import { DeferredState } from './deferred-state.js';
import type { OtelConfig } from './otel-config.js';
import type { TraceSampler } from './sampler.js';
import { SpanBuilder, type SpanCtx } from './span-builder.js';
import type { SpanContextSource } from './span-context-stage.js';
import { SpanExport } from './span-export.js';
import { ForeignSpans } from './foreign-spans.js';
import type { SpanRecord } from './span-record.js';
import type { WireEvent } from '../aep/wire.js';

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
 * The OpenTelemetry mirror. Its span builder takes each live event in the
 * pipeline's span context stage (`assign`, before the bus): the `traceparent`
 * the history writes must be known before the write, so the builder's state
 * advances there. The spans an event FINISHES do not leave from there: they
 * wait on the frozen stamped event (`stamped`, a WeakMap) and go to export
 * when the bus hands the mirror that event after its durable write
 * (`consume`). An event the history never holds (its write given up) exports
 * nothing: its spans are counted `spans_unwritten` (`unwritten`). Known limit:
 * the builder already moved on at stamp time, so a later event that is
 * written can still finish a unit whose earlier event was lost.
 * At start it takes back what the previous process left open: a snapshot's
 * state (`deferState`, `loadState`) and the log past it (`restore`).
 */
export class OtelMirror implements Consumer, Reporting, SpanContextSource {
  readonly name = 'otel';
  readonly builder: SpanBuilder;
  /** other emitters' events (the stream's ingest): a builder of their own, keyed by `(source, session)` */
  private readonly foreign: ForeignSpans;
  private readonly export: SpanExport;
  private readonly deferred: DeferredState;
  private readonly now: () => number;
  /** what the last `assign` finished, until `stamped` names its event */
  private finishing: readonly SpanRecord[] = [];
  /** stamped event → the spans it finished, exported once the history holds it */
  private readonly awaiting = new WeakMap<AepEvent, readonly SpanRecord[]>();
  /** spans finished by events the history then gave up: never exported */
  private unwrittenSpans = 0;
  /** spans finished by events whose durable write has not settled yet */
  private awaitingSpans = 0;
  private replayed = 0;
  private replayDiscarded = 0;
  private timer: NodeJS.Timeout | undefined;
  private shut: Promise<void> | undefined;
  private started = false;

  constructor(private readonly opts: MirrorOptions) {
    const builderOpts = { sampler: opts.sampler, ceiling: opts.config.ceiling, maxOpenUnits: opts.config.maxOpenUnits };
    this.builder = new SpanBuilder(builderOpts);
    this.foreign = new ForeignSpans(builderOpts);
    this.export = new SpanExport(opts);
    // the start-up sweep (see start) runs once the restored units are all in
    this.deferred = new DeferredState(
      this.builder,
      (ev) => this.replay(ev),
      () => this.started && this.discardIdle(),
    );
    this.now = opts.now ?? Date.now;
  }

  /**
   * Start the idle sweep. Units the restore left idle are dropped, not
   * exported: the previous process may already have closed and exported them
   * (same ids), and a duplicate span is worse than a missing one.
   */
  start(): void {
    this.started = true;
    if (this.deferred.loading) this.deferred.inBackground();
    else this.discardIdle();
    const every = Math.max(1_000, Math.min(60_000, Math.floor(this.opts.config.idleMs / 4)));
    this.timer = setInterval(() => {
      this.deferred.settle();
      this.export.enqueue(this.builder.sweep(this.now(), this.opts.config.idleMs));
      this.export.enqueue(this.foreign.sweep(this.now(), this.opts.config.idleMs));
    }, every);
    this.timer.unref();
    this.export.start();
  }

  private discardIdle(): void {
    this.replayDiscarded += this.builder.sweep(this.now(), this.opts.config.idleMs).length;
  }

  /** One live event (the span context stage calls this): the spans it finishes wait for `stamped`. */
  assign(ev: AepEvent): SpanCtx | undefined {
    this.finishing = [];
    this.deferred.settle();
    const { ctx, finished } = this.builder.accept(ev);
    this.finishing = finished;
    return ctx;
  }

  /** The event `assign` just took, stamped and frozen: what it finished waits on it for its durable write. */
  stamped(ev: AepEvent): void {
    if (this.finishing.length > 0) {
      this.awaiting.set(ev, this.finishing);
      this.awaitingSpans += this.finishing.length;
    }
    this.finishing = [];
  }

  /** Events the history holds (the bus, after their durable write): the spans they finished go to export. */
  consume(events: readonly AepEvent[]): void {
    for (const ev of events) {
      const spans = this.awaiting.get(ev);
      if (!spans) continue;
      this.awaiting.delete(ev);
      this.awaitingSpans -= spans.length;
      this.export.enqueue(spans);
    }
  }

  /** Events the history gave up (the bus never hands them to `consume`): their spans are counted, not exported. */
  unwritten(events: readonly AepEvent[]): void {
    for (const ev of events) {
      const spans = this.awaiting.get(ev);
      if (!spans) continue;
      this.awaiting.delete(ev);
      this.awaitingSpans -= spans.length;
      this.unwrittenSpans += spans.length;
    }
  }

  /** One ingested event (never changed: no `traceparent` is stamped on it); the spans it finishes go to export. */
  mirrorForeign(w: WireEvent): void {
    this.export.enqueue(this.foreign.accept(w));
  }

  /**
   * Take one event from the durable log of a previous process: rebuilds the
   * units it left open, so a run that started before a restart ends as ONE
   * root span with its real start and timeline. Units that finish during the
   * replay are discarded: the previous process exported them.
   */
  restore(ev: AepEvent): void {
    if (!this.deferred.queue(ev)) this.replay(ev);
  }

  private replay(ev: AepEvent): void {
    this.builder.accept(ev);
    this.replayed++;
  }

  health(): Degradation | undefined {
    return this.export.health();
  }

  /**
   * Take back a snapshot's state LATER (see DeferredState): after `start()`,
   * in slices, and at once when an event or a snapshot needs it. If it does
   * not read back, `rebuild` replays the logs into the builder instead.
   */
  deferState(read: () => BuilderState, keep: (session: string) => boolean, rebuild: () => void): void {
    this.deferred.defer(read, keep, rebuild);
  }

  /** Whether a deferred state is still to load (for /healthz). */
  get stateLoading(): boolean {
    return this.deferred.loading;
  }

  /** What the span builder's memory depends on besides the log: a snapshot taken under another value is not loaded. */
  get stateFingerprint(): string {
    return `capture=${this.opts.config.ceiling}`;
  }

  /** The builder's memory as data (tests compare it). */
  saveState(): BuilderState {
    this.deferred.settle();
    return this.builder.saveState();
  }

  /** The builder's memory captured at once, for the start-up snapshot (turned into JSON in slices by its writer). */
  captureState(): BuilderCapture {
    this.deferred.settle();
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
    return this.export.flush();
  }

  shutdown(): Promise<void> {
    // open units are NOT exported here: the next start rebuilds them from the log
    this.shut ??= (async () => {
      if (this.timer) clearInterval(this.timer);
      await this.export.shutdown();
    })();
    return this.shut;
  }

  /** Span export requests that failed so far (the metrics' `aep.export.failures`). */
  get exportFailures(): number {
    return this.export.failedRequests;
  }

  stats(): Record<string, number | boolean | string> {
    const lastError = this.export.lastError;
    return {
      exporter: this.opts.config.exporter,
      open_units: this.builder.openUnits,
      foreign_open_units: this.foreign.openUnits,
      spans_finished: this.builder.counters.finished,
      spans_incomplete: this.builder.counters.incomplete,
      spans_awaiting_write: this.awaitingSpans,
      spans_unwritten: this.unwrittenSpans,
      ...this.export.stats(),
      replayed_events: this.replayed,
      ...(this.deferred.loading ? { state_loading: true } : {}),
      ...(this.deferred.rebuilt ? { state_rebuilt_from_logs: true } : {}),
      replay_discarded_units: this.replayDiscarded,
      late_events: this.builder.counters.late,
      ...(lastError ? { last_error: lastError } : {}),
    };
  }
}
