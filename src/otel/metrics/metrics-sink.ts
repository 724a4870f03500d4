import type { Attributes, Counter, Histogram, Meter, ObservableResult } from '@opentelemetry/api';
import type { ExportResult, ExportResultCode } from '@opentelemetry/core';
import type { MeterProvider, PushMetricExporter, ResourceMetrics } from '@opentelemetry/sdk-metrics';
import type { AepEvent } from '../../aep/event.js';
import type { Consumer, Reporting } from '../../bus/consumer.js';
import { HealthLatch, errorCode, type Degradation } from '../../core/health-latch.js';
import { silentLogger, type Logger } from '../../core/logger.js';
import { RESOURCE_ATTR } from '../attribute-catalogue.js';
import { INSTRUMENTS, METRIC_ATTR as M, bounded, type InstrumentId, type InstrumentSpec } from './instrument-catalogue.js';
import { ExportFailures, type DaemonReadings } from './daemon-readings.js';
import { LabelCaps, OVERFLOW_ATTR, SERIES_LIMIT, SeriesCap, type AttrValue } from './label-caps.js';
import { measure, Pairing, type Measurement } from './measurements.js';
import type { MetricsConfig } from './metrics-config.js';

/** measurements made before the SDK is loaded (the first second after listen), held at most this many; more are counted */
const MAX_EARLY = 10_000;
/** `ExportResultCode.SUCCESS`, without loading @opentelemetry/core at start */
const SUCCESS = 0 as ExportResultCode.SUCCESS;
/** what the final export may take at shutdown */
export const METRICS_SHUTDOWN_MS = 5_000;

export interface MetricsSinkOptions {
  readonly config: MetricsConfig;
  /** the exporter; default: the one `config` names, imported once `start()` runs */
  readonly exporter?: () => Promise<PushMetricExporter>;
  readonly version: string;
  readonly readings?: DaemonReadings;
  /** where each signal registers its failed-export count; the sink registers `metrics` */
  readonly exportFailures?: ExportFailures;
  readonly log?: Logger;
  /** bound of the open turns and cards kept for durations and card kinds */
  readonly maxOpen?: number;
}

type Instruments = { [K in InstrumentId]?: Counter | Histogram };
/** a measurement whose attributes passed the caps (the overflow series' attribute is a boolean) */
type Bounded = Omit<Measurement, 'attrs'> & { readonly attrs: Readonly<Record<string, AttrValue>> };

/**
 * The metrics signal: each live event the bus hands on after its durable write becomes measurements
 * (measurements.ts), recorded into the OTel metrics SDK, exported by a
 * periodic reader. Events the start-up replay reads back reach `remember`
 * only (pairing state, never measured), so nothing is counted twice. The SDK
 * and the exporter load once `start()` runs (after listen); measurements made
 * before are held, bounded, and every one dropped is counted.
 */
export class MetricsSink implements Consumer, Reporting {
  readonly name = 'metrics';
  private readonly pairing: Pairing;
  private readonly latch: HealthLatch;
  private readonly failures: ExportFailures;
  private early: Bounded[] = [];
  /** every attribute's distinct values, and every instrument's series, bounded over the daemon's life (label-caps.ts) */
  private readonly labels = new LabelCaps();
  private readonly series = new SeriesCap();
  /** the same caps for the observed attributes (the daemon's own counters, read at each collection: not counted) */
  private readonly observedLabels = new LabelCaps();
  private instruments: Instruments | undefined;
  private provider: MeterProvider | undefined;
  private loading: Promise<void> | undefined;
  private shut: Promise<void> | undefined;
  private earlyDropped = 0;
  private errors = 0;
  private exportsOk = 0;
  private exportsFailed = 0;
  private lastError: string | undefined;
  /** instruments whose last export held the overflow series (the SDK's limit or the series cap reached) */
  private overflowing = 0;
  /** what the observable instruments read (set once the daemon's parts exist; read at collection only) */
  readings: DaemonReadings;

  constructor(private readonly opts: MetricsSinkOptions) {
    this.readings = opts.readings ?? {};
    this.pairing = new Pairing(opts.maxOpen);
    this.failures = opts.exportFailures ?? new ExportFailures();
    this.failures.register('metrics', () => this.exportsFailed);
    this.latch = new HealthLatch('metrics', opts.log ?? silentLogger, {
      failing: 'metrics cannot be exported: /healthz is degraded until an export succeeds',
      recovered: 'metrics are exported again',
    });
  }

  /** Load the SDK and the exporter in the background, and start the periodic export. */
  start(): Promise<void> {
    return (this.loading ??= this.load().catch((err: unknown) => {
      this.exportsFailed++;
      this.lastError = errorCode(err);
      this.latch.fail('export', `metrics exporter failed to load: ${this.lastError}`);
    }));
  }

  consume(events: readonly AepEvent[]): void {
    for (const ev of events) {
      try {
        for (const m of measure(ev, this.pairing)) this.put(this.bound(m));
      } catch {
        this.errors++;
      }
    }
  }

  /** One event of the log a previous process wrote (the start-up replay): pairing state only. */
  remember(ev: AepEvent): void {
    try {
      this.pairing.remember(ev);
    } catch {
      this.errors++;
    }
  }

  /** The measurement with every attribute within its cap, and its attribute set within its instrument's series limit. */
  private bound(m: Measurement): Bounded {
    return { id: m.id, value: m.value, attrs: this.series.apply(m.id, this.labels.apply(m.attrs)) };
  }

  private put(m: Bounded): void {
    const ins = this.instruments;
    if (ins) {
      const i = ins[m.id];
      if (i && 'add' in i) i.add(m.value, m.attrs);
      else i?.record(m.value, m.attrs);
      return;
    }
    if (this.early.length >= MAX_EARLY) this.earlyDropped++;
    else this.early.push(m);
  }

  private async load(): Promise<void> {
    const [sdk, api, { detectResources, envDetector, resourceFromAttributes }, exporter] = await Promise.all([
      import('@opentelemetry/sdk-metrics'),
      import('@opentelemetry/api'),
      import('@opentelemetry/resources'),
      this.opts.exporter ? this.opts.exporter() : import('./metric-exporter-factory.js').then((f) => f.createMetricExporter(this.opts.config)),
    ]);
    if (!exporter || this.shut) return;
    const { AggregationTemporality: T, AggregationType, InstrumentType: I } = sdk;
    const temporality = this.opts.config.temporality;
    // the specification's three preferences; up-down counters stay cumulative in all of them
    const deltaOf = new Set<string>(
      temporality === 'delta' ? [I.COUNTER, I.OBSERVABLE_COUNTER, I.HISTOGRAM] : temporality === 'lowmemory' ? [I.COUNTER, I.HISTOGRAM] : [],
    );
    const counting: PushMetricExporter = {
      export: (metrics: ResourceMetrics, done: (r: ExportResult) => void) => {
        this.overflowing = overflowingInstruments(metrics);
        exporter.export(metrics, (r) => {
          this.exported(r);
          done(r);
        });
      },
      forceFlush: () => exporter.forceFlush(),
      shutdown: () => exporter.shutdown(),
      selectAggregationTemporality: (type) => (deltaOf.has(type) ? T.DELTA : T.CUMULATIVE),
    };
    const specs = Object.values(INSTRUMENTS) as InstrumentSpec[];
    const resource = resourceFromAttributes({ [RESOURCE_ATTR.serviceName]: 'hermes-aep', [RESOURCE_ATTR.serviceVersion]: this.opts.version }).merge(
      detectResources({ detectors: [envDetector] }),
    );
    this.provider = new sdk.MeterProvider({
      resource,
      // the allow-list of each instrument is enforced by the SDK too: a key not listed never leaves
      // the SDK's cardinality limit: a view's applies to its instrument (the reader's only to instruments without a view)
      views: specs.map((s) => ({
        instrumentName: s.name,
        attributesProcessors: [sdk.createAllowListAttributesProcessor([...s.attributes, OVERFLOW_ATTR])],
        aggregationCardinalityLimit: SERIES_LIMIT,
        ...(s.buckets ? { aggregation: { type: AggregationType.EXPLICIT_BUCKET_HISTOGRAM, options: { boundaries: [...s.buckets] } } } : {}),
      })),
      readers: [
        new sdk.PeriodicExportingMetricReader({
          exporter: counting,
          exportIntervalMillis: this.opts.config.intervalMs,
          exportTimeoutMillis: this.opts.config.timeoutMs,
          cardinalityLimits: { default: SERIES_LIMIT },
        }),
      ],
    });
    const meter = this.provider.getMeter('hermes-aep', this.opts.version);
    const ins: Instruments = {};
    for (const [id, s] of Object.entries(INSTRUMENTS) as [InstrumentId, InstrumentSpec][]) {
      const o = { unit: s.unit, description: s.description, valueType: s.double ? api.ValueType.DOUBLE : api.ValueType.INT };
      if (s.kind === 'counter') ins[id] = meter.createCounter(s.name, o);
      else if (s.kind === 'histogram') ins[id] = meter.createHistogram(s.name, { ...o, advice: { explicitBucketBoundaries: [...(s.buckets ?? [])] } });
    }
    this.observe(meter);
    this.instruments = ins;
    for (const m of this.early.splice(0)) this.put(m);
  }

  /** The observable instruments: read from the daemon's own counters at each collection. */
  private observe(meter: Meter): void {
    const r = (): DaemonReadings => this.readings;
    const obs = (spec: InstrumentSpec, gauge: boolean, cb: (o: ObservableResult<Attributes>) => void) => {
      const o = { unit: spec.unit, description: spec.description };
      (gauge ? meter.createObservableGauge(spec.name, o) : meter.createObservableCounter(spec.name, o)).addCallback(cb);
    };
    const ok = (n: unknown): n is number => typeof n === 'number' && Number.isFinite(n) && n >= 0;
    const name = (key: string, v: string) => this.observedLabels.value(key, bounded(v, 64) ?? 'other');
    obs(INSTRUMENTS.hooks, false, (o) => {
      const sum = new Summed();
      for (const [hook, n] of Object.entries(r().hooks?.() ?? {})) if (ok(n)) sum.add(n, { [M.hook]: name(M.hook, hook) });
      sum.observe(o);
    });
    obs(INSTRUMENTS.queueDepth, true, (o) => {
      const sum = new Summed();
      for (const [sink, n] of Object.entries(r().queues?.() ?? {})) if (ok(n)) sum.add(n, { [M.sink]: name(M.sink, sink) });
      sum.observe(o);
    });
    obs(INSTRUMENTS.dropped, false, (o) => {
      // the sink's own first: its counters keep their names whatever the others hold
      const own = { early_queue_full: this.earlyDropped, pairing_evicted: this.pairing.evicted };
      const drops = [['metrics', own] as const, ...Object.entries(r().drops?.() ?? {}).filter(([sink]) => sink !== 'metrics')];
      const sum = new Summed();
      for (const [sink, reasons] of drops)
        for (const [reason, n] of Object.entries(reasons ?? {})) if (ok(n)) sum.add(n, { [M.sink]: name(M.sink, sink), [M.reason]: name(M.reason, reason) });
      sum.observe(o);
    });
    obs(INSTRUMENTS.exportFailures, false, (o) => {
      for (const [signal, n] of this.failures.read()) if (ok(n)) o.observe(n, { [M.signal]: signal });
    });
  }

  private exported(r: ExportResult): void {
    if (r.code === SUCCESS) {
      this.exportsOk++;
      this.latch.recover('export', { exports_failed: this.exportsFailed });
    } else {
      this.exportsFailed++;
      this.lastError = errorCode(r.error);
      this.latch.fail('export', `metrics export failed: ${this.lastError}`);
    }
  }

  health(): Degradation | undefined {
    return this.latch.current();
  }

  /** Collect and export now (what is recorded so far). */
  async flush(): Promise<void> {
    await this.start();
    await this.provider?.forceFlush();
  }

  /** A last export, bounded by METRICS_SHUTDOWN_MS; safe to call twice. */
  shutdown(): Promise<void> {
    this.shut ??= (async () => {
      this.latch.close();
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, METRICS_SHUTDOWN_MS);
        timer.unref();
      });
      await Promise.race([(this.loading ?? Promise.resolve()).then(() => this.provider?.shutdown()).catch(() => undefined), deadline]);
      clearTimeout(timer);
    })();
    return this.shut;
  }

  stats(): Record<string, number | boolean | string> {
    const c = this.opts.config;
    return {
      exporter: c.exporter,
      ...(c.exporter === 'otlp' ? { protocol: c.protocol } : {}),
      temporality: c.temporality,
      interval_ms: c.intervalMs,
      exports_ok: this.exportsOk,
      exports_failed: this.exportsFailed,
      early_queued: this.early.length,
      early_dropped: this.earlyDropped,
      open_pairs: this.pairing.open,
      pairs_evicted: this.pairing.evicted,
      unpaired_terminals: this.pairing.unpaired,
      labels_capped: this.labels.capped,
      series_capped: this.series.capped,
      overflow_instruments: this.overflowing,
      ...(this.errors ? { errors: this.errors } : {}),
      ...(this.lastError ? { last_error: this.lastError } : {}),
    };
  }
}

/** Observations summed by their attributes: values capped into `other` add up in it (one observation per series). */
class Summed {
  private readonly by = new Map<string, { n: number; attrs: Attributes }>();

  add(n: number, attrs: Readonly<Record<string, AttrValue>>): void {
    const key = JSON.stringify(Object.entries(attrs));
    const cur = this.by.get(key);
    if (cur) cur.n += n;
    else this.by.set(key, { n, attrs: { ...attrs } });
  }

  observe(o: ObservableResult<Attributes>): void {
    for (const { n, attrs } of this.by.values()) o.observe(n, attrs);
  }
}

/** How many instruments of an export carry the overflow series. */
function overflowingInstruments(rm: ResourceMetrics): number {
  let n = 0;
  for (const sm of rm.scopeMetrics)
    for (const m of sm.metrics) if ((m.dataPoints as { attributes: Attributes }[]).some((p) => p.attributes[OVERFLOW_ATTR] === true)) n++;
  return n;
}
