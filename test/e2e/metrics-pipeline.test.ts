import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT_CONTEXT, trace, TraceFlags, type Meter } from '@opentelemetry/api';
import { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { LoggerProvider, SimpleLogRecordProcessor } from '@opentelemetry/sdk-logs';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyse, dashboardExprs, dataPanels, loadDashboard, substitute } from '../support/dashboard.js';
import { METRICS_CONTRACT, promBase, promName, promSeriesNames, type ContractMetric } from '../support/metrics-contract.js';
import { startDaemonProcess, tempDir, waitFor, type DaemonProcess } from '../support/processes.js';
import { readLogs } from '../support/stream-invariants.js';
import { startFakeLlm, type FakeLlm } from './support/fake-llm.js';
import { makeHermesHome, runHermes } from './support/hermes.js';
import { MODEL_CALLS, modelCallsStep } from './record/model-calls.js';
import { renderDashboard } from '../tools/render-dashboard-svg.js';
import {
  startCollector,
  startJaeger,
  startPrometheus,
  stopAllServices,
  type CollectorService,
  type JaegerService,
  type PrometheusService,
} from './support/services.js';
import { decodeResourceLogs } from '../support/otlp-json.js';
import { toLogRecord } from '../../src/otel/logs/log-record.js';
import type { AepEvent } from '../../src/aep/event.js';

/**
 * The metrics and logs paths with real processes: the collector built from
 * otel/builder-config.yaml running the shipped otel-collector.yaml (plus the
 * e2e overlay that writes the logs pipeline to a file), and the Prometheus
 * server built from its Go module running deploy/prometheus/prometheus.yml,
 * scraping the collector's prometheus exporter.
 *
 * Part 1 pushes every metric of the contract (test/support/metrics-contract.ts)
 * with the OpenTelemetry SDK, exactly as an OTLP client would, and a LogRecord:
 * it pins how this collector release names things in Prometheus and that every
 * dashboard expression evaluates in the real Prometheus against those names.
 * Part 2 runs a real Hermes turn through the daemon and checks the daemon's own
 * metrics and log records against the same contract, with exact values.
 */

const dashboard = loadDashboard();
const contractSeries = promSeriesNames();

// ---------------------------------------------------------------------------
// Prometheus text exposition and HTTP API, only what the tests need

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

function parseExposition(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m) throw new Error(`unparsable exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = JSON.parse(`"${l[2]!}"`) as string;
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

async function scrape(c: CollectorService, job: string): Promise<Sample[]> {
  const res = await fetch(`http://${c.prometheusTarget}/metrics`, { signal: AbortSignal.timeout(5_000) });
  expect(res.status).toBe(200);
  return parseExposition(await res.text()).filter((s) => s.labels.job === job);
}

/** Sum of the samples named `name` whose labels include `where`. */
function total(samples: Sample[], name: string, where: Record<string, string> = {}): number {
  return samples.filter((s) => s.name === name && Object.entries(where).every(([k, v]) => s.labels[k] === v)).reduce((n, s) => n + s.value, 0);
}

interface PromResult {
  status: string;
  error?: string;
  data?: { resultType: string; result: { metric: Record<string, string>; value: [number, string] }[] };
}
async function promQuery(p: PrometheusService, query: string): Promise<PromResult> {
  const res = await fetch(`${p.url}/api/v1/query`, {
    method: 'POST',
    body: new URLSearchParams({ query }),
    signal: AbortSignal.timeout(10_000),
  });
  return (await res.json()) as PromResult;
}

/** Every dashboard expression, substituted for `job`, evaluated by the real Prometheus. */
async function evaluateDashboard(p: PrometheusService, job: string) {
  const out: { title: string; expr: string; result: PromResult; use: ReturnType<typeof analyse> }[] = [];
  for (const { panel, target } of dashboardExprs(dashboard)) {
    // windows long enough to hold several of the test's 500 ms scrapes
    const expr = substitute(target.expr, { job, rateInterval: '30s', range: '5m' });
    out.push({ title: panel.title, expr, result: await promQuery(p, expr), use: analyse(expr) });
  }
  return out;
}

/** The labels seen on the scraped series of each name. */
function labelsByName(samples: Sample[]): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const s of samples) {
    const set = out.get(s.name) ?? new Set<string>();
    for (const k of Object.keys(s.labels)) set.add(k);
    out.set(s.name, set);
  }
  return out;
}

interface LogLine {
  resourceLogs?: {
    resource?: { attributes?: { key: string; value: { stringValue?: string } }[] };
    scopeLogs?: { logRecords?: { eventName?: string; traceId?: string; spanId?: string; body?: unknown; attributes?: unknown[] }[] }[];
  }[];
}
/** Every LogRecord in the collector's logs file, with its resource's service.name. */
function readLogRecords(file: string) {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .flatMap((l) =>
      ((JSON.parse(l) as LogLine).resourceLogs ?? []).flatMap((rl) => {
        const service = rl.resource?.attributes?.find((a) => a.key === 'service.name')?.value.stringValue;
        return (rl.scopeLogs ?? []).flatMap((sl) => (sl.logRecords ?? []).map((r) => ({ service, ...r })));
      }),
    );
}

let collector: CollectorService;
let prometheus: PrometheusService;
let jaeger: JaegerService;

beforeAll(async () => {
  // Jaeger: the traces pipeline's end, and where the log records' spans must be found
  jaeger = await startJaeger();
  collector = await startCollector({ jaegerGrpcPort: jaeger.ports.otlpGrpc, logsFile: true, env: { OTELCOL_BATCH_TIMEOUT: '100ms' } });
  prometheus = await startPrometheus({ target: collector.prometheusTarget, scrapeInterval: '500ms' });
}, 60_000);

afterAll(async () => {
  await stopAllServices();
});

// ---------------------------------------------------------------------------
// Part 1: the contract pushed with the SDK

/** One data point per value of each enum attribute (else one), every attribute of the contract set. */
function pointsOf(m: ContractMetric): Record<string, string | number>[] {
  const base: Record<string, string | number> = {};
  for (const a of m.attributes) base[a] = a === 'server.port' ? 443 : `${a.split('.').pop()}-x`;
  const [enumAttr, values] = Object.entries(m.values ?? {}).find(([a]) => a !== 'gen_ai.operation.name' || m.otel !== 'gen_ai.client.token.usage') ?? [];
  for (const [a, v] of Object.entries(m.values ?? {})) base[a] = v[0]!;
  return enumAttr ? values!.map((v) => ({ ...base, [enumAttr]: v })) : [base];
}

/** Record every contract metric: counters add 2 per point, histograms record 0.5 and 3, gauges observe 7. */
function recordContract(meter: Meter): void {
  for (const m of METRICS_CONTRACT) {
    const points = pointsOf(m);
    if (m.kind === 'histogram') {
      const h = meter.createHistogram(m.otel, { unit: m.unit });
      for (const p of points) for (const v of [0.5, 3]) h.record(v, p);
    } else if (m.kind === 'gauge') {
      meter.createObservableGauge(m.otel, { unit: m.unit }).addCallback((r) => points.forEach((p) => r.observe(7, p)));
    } else if (['aep.dropped', 'aep.export.failures'].includes(m.otel)) {
      meter.createObservableCounter(m.otel, { unit: m.unit }).addCallback((r) => points.forEach((p) => r.observe(2, p)));
    } else {
      const c = meter.createCounter(m.otel, { unit: m.unit });
      for (const p of points) c.add(2, p);
    }
  }
}

/** The dashboard drawn from `prom` over the last five minutes: every data panel's title and a mark of data in it. */
async function expectDrawn(prom: string, job: string): Promise<string> {
  const end = Math.ceil(Date.now() / 1000);
  const d = loadDashboard();
  const svg = await renderDashboard(d, prom, end - 300, end, job);
  const esc = (t: string) => t.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  for (const p of dataPanels(d)) expect(svg, p.title).toContain(`>${esc(p.title ?? '')}</text>`);
  expect(svg).toMatch(/<polyline|<circle/);
  return svg;
}

describe('the contract pushed over OTLP: collector (prometheus exporter) → real Prometheus → every dashboard expression', () => {
  const job = `hermes-aep-e2e-metrics-${randomBytes(4).toString('hex')}`;
  const instance = `e2e-${randomBytes(4).toString('hex')}`;
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  let samples: Sample[];

  beforeAll(async () => {
    const resource = resourceFromAttributes({ 'service.name': job, 'service.instance.id': instance, 'service.version': 'e2e' });
    const meters = new MeterProvider({
      resource,
      readers: [
        new PeriodicExportingMetricReader({ exporter: new OTLPMetricExporter({ url: `${collector.otlpHttpUrl}/v1/metrics` }), exportIntervalMillis: 250 }),
      ],
    });
    recordContract(meters.getMeter('hermes-aep'));
    const logs = new LoggerProvider({
      resource,
      processors: [new SimpleLogRecordProcessor({ exporter: new OTLPLogExporter({ url: `${collector.otlpHttpUrl}/v1/logs` }) })],
    });
    logs.getLogger('hermes-aep').emit({
      eventName: 'dev.aep.run.started',
      body: { type: 'run.started' },
      context: trace.setSpanContext(ROOT_CONTEXT, { traceId, spanId, traceFlags: TraceFlags.SAMPLED }),
    });
    await logs.forceFlush();
    await logs.shutdown();
    // keep pushing (cumulative, unchanged) until Prometheus holds several scrapes of it, so rate() has samples
    await waitFor(
      'Prometheus to hold 3 scrapes of the pushed metrics',
      async () => {
        const r = await promQuery(prometheus, `count_over_time(aep_runs_total{job="${job}",aep_outcome="finished"}[30s])`);
        return Number(r.data?.result[0]?.value[1] ?? 0) >= 3 ? true : undefined;
      },
      30_000,
    );
    samples = await scrape(collector, job);
    await meters.shutdown();
  }, 60_000);

  it('the collector names every contract metric as metrics-contract.ts predicts, and nothing else but target_info', () => {
    const names = new Set(samples.map((s) => s.name));
    expect([...names].sort()).toEqual([...contractSeries.keys(), 'target_info'].sort());
    // service.name -> job, service.instance.id -> instance; the other resource attributes only on target_info
    expect(samples.filter((s) => s.name === 'target_info').map((s) => s.labels)).toEqual([{ job, instance, service_version: 'e2e' }]);
    for (const s of samples) {
      if (s.name === 'target_info') continue;
      expect(s.labels.instance, s.name).toBe(instance);
      const allowed = contractSeries.get(s.name)!.labels;
      for (const l of Object.keys(s.labels)) expect(allowed.has(l), `${s.name} carries ${l}`).toBe(true);
    }
    // the units: {USD} and every other {annotation} add nothing, s adds _seconds
    expect(names.has('aep_cost_total')).toBe(true);
    expect(names.has('gen_ai_client_operation_duration_seconds_bucket')).toBe(true);
    expect(names.has('gen_ai_client_token_usage_bucket')).toBe(true);
  });

  it('the values arrive exactly: counters, histogram counts and sums, gauges', () => {
    for (const m of METRICS_CONTRACT) {
      const n = pointsOf(m).length;
      const base = promBase(m);
      if (m.kind === 'histogram') {
        expect(total(samples, `${base}_count`), base).toBe(2 * n);
        expect(total(samples, `${base}_sum`), base).toBe(3.5 * n);
        expect(total(samples, `${base}_bucket`, { le: '+Inf' }), base).toBe(2 * n);
      } else {
        expect(total(samples, base), base).toBe((m.kind === 'gauge' ? 7 : 2) * n);
      }
      // every attribute became a label
      const one = samples.find((s) => s.name.startsWith(base))!;
      for (const a of m.attributes) expect(Object.keys(one.labels), `${base}: ${a}`).toContain(promName(a));
    }
    expect(total(samples, 'aep_runs_total', { aep_outcome: 'failed' })).toBe(2);
    expect(total(samples, 'gen_ai_client_token_usage_count', { gen_ai_token_type: 'output' })).toBe(2);
  });

  it('every dashboard expression evaluates in the real Prometheus to a non-empty result, over series and labels the scrape has', async () => {
    const seen = labelsByName(samples);
    const results = await evaluateDashboard(prometheus, job);
    expect(results.length).toBe(dashboardExprs(dashboard).length);
    for (const r of results) {
      expect(r.result.status, `${r.title}: ${r.expr}: ${r.result.error}`).toBe('success');
      expect(r.result.data?.result.length ?? 0, `${r.title}: ${r.expr} is empty`).toBeGreaterThan(0);
      for (const m of r.use.metrics) expect(seen.has(m), `${r.title}: ${m} is not in the scrape`).toBe(true);
      const labels = new Set([...r.use.metrics].flatMap((m) => [...(seen.get(m) ?? [])]));
      for (const l of r.use.labels) expect(labels.has(l), `${r.title}: label ${l} is on none of ${[...r.use.metrics].join(', ')}`).toBe(true);
    }
  });

  it('the dashboard draws from these query results: every panel, at its place (test/tools/render-dashboard-svg.ts)', async () => {
    await expectDrawn(prometheus.url, job);
  });

  it("increase() counts a counter's first increment (the zero at its start time: created-timestamp-zero-ingestion)", async () => {
    // every series here was born in this test with value 2: without the zero sample, increase() would say 0
    const r = await promQuery(prometheus, `sum(increase(aep_runs_total{job="${job}",aep_outcome="finished"}[5m]))`);
    const v = Number(r.data?.result[0]?.value[1]);
    expect(Math.abs(v - 2), `increase = ${v}`).toBeLessThan(0.5);
  });

  it('a renamed metric is caught: Prometheus evaluates it to nothing', async () => {
    const r = await promQuery(prometheus, `sum(rate(aep_run_total{job="${job}"}[30s]))`);
    expect(r.status).toBe('success');
    expect(r.data?.result).toEqual([]);
  });

  it('the logs pipeline wrote the pushed LogRecord, event name and trace context intact', async () => {
    const records = await waitFor('the LogRecord in the collector logs file', () => {
      const all = readLogRecords(collector.logsFile!).filter((r) => r.service === job);
      return all.length > 0 ? all : undefined;
    });
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ eventName: 'dev.aep.run.started', traceId, spanId });
  });
});

// ---------------------------------------------------------------------------
// Part 2: a real Hermes turn through the daemon

const PRICES = { models: [{ provider: 'custom', model: 'fake-model', input_mtok: 2, output_mtok: 8, cache_read_mtok: 0.5, cache_write_mtok: 2.5 }] };
const usd = (u: (typeof MODEL_CALLS.usage)[number]) =>
  ((u.prompt_tokens - u.cached_tokens - u.cache_write_tokens) * 2 + u.cached_tokens * 0.5 + u.cache_write_tokens * 2.5 + u.completion_tokens * 8) / 1e6;
/** Dashboard metrics a plain turn (no attention card, no approval, nothing dropped) does not produce. */
const NOT_IN_A_PLAIN_TURN = new Set(['aep_attention_wait_seconds_bucket', 'aep_attention_cards_total', 'aep_approvals_total', 'aep_dropped_total']);

describe('a real Hermes turn through the daemon: its metrics and log records behind the collector', () => {
  const job = `hermes-aep-e2e-daemon-${randomBytes(4).toString('hex')}`;
  let llm: FakeLlm;
  let daemon: DaemonProcess;
  let samples: Sample[];
  let traceIds: Set<string>;

  beforeAll(async () => {
    llm = await startFakeLlm({ steps: [modelCallsStep], auxiliaryReply: () => 'Fake session title' });
    const pricesFile = path.join(tempDir('hermes-aep-prices-'), 'prices.json');
    writeFileSync(pricesFile, JSON.stringify(PRICES));
    daemon = await startDaemonProcess({
      AEP_PORT: '',
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_METRICS_EXPORTER: 'otlp',
      OTEL_LOGS_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.otlpHttpUrl,
      OTEL_METRIC_EXPORT_INTERVAL: '500',
      OTEL_BSP_SCHEDULE_DELAY: '200',
      OTEL_BLRP_SCHEDULE_DELAY: '200',
      OTEL_SERVICE_NAME: job,
      AEP_PRICES_FILE: pricesFile,
    });
    const home = await makeHermesHome({ modelUrl: llm.url, hookEnv: { AEP_STATE_DIR: daemon.stateDir } });
    const run = await runHermes(home, ['-z', `${MODEL_CALLS.marker} run the command`]);
    expect(run.code).toBe(0);
    const events = await waitFor('the turn ended in the history', () => {
      const all = [...readLogs(daemon.historyDir).values()].flat();
      return all.some((e) => e.type === 'run.finished') ? all : undefined;
    });
    traceIds = new Set(events.flatMap((e) => (typeof e.traceparent === 'string' ? [e.traceparent.split('-')[1]!] : [])));
    samples = await waitFor(
      'the turn in the scrape',
      async () => {
        const s = await scrape(collector, job);
        return total(s, 'aep_runs_total') >= 1 && total(s, 'gen_ai_client_operation_duration_seconds_count', { gen_ai_operation_name: 'chat' }) >= 2
          ? s
          : undefined;
      },
      30_000,
    );
  }, 240_000);

  afterAll(async () => {
    await daemon?.stop();
    await llm?.close();
  });

  it('counts the turn, its tool call, its model calls, tokens and cost exactly', () => {
    expect(total(samples, 'aep_runs_total')).toBe(1);
    expect(total(samples, 'aep_runs_total', { aep_outcome: 'finished' })).toBe(1);
    expect(total(samples, 'aep_tool_calls_total')).toBe(1);
    expect(total(samples, 'aep_tool_calls_total', { gen_ai_tool_name: 'terminal', aep_outcome: 'ok' })).toBe(1);
    const dur = 'gen_ai_client_operation_duration_seconds_count';
    expect(total(samples, dur, { gen_ai_operation_name: 'chat' })).toBe(2);
    expect(total(samples, dur, { gen_ai_operation_name: 'execute_tool', gen_ai_tool_name: 'terminal' })).toBe(1);
    expect(total(samples, dur, { gen_ai_operation_name: 'invoke_agent' })).toBe(1);
    const sum = (k: 'prompt_tokens' | 'completion_tokens') => MODEL_CALLS.usage.reduce((n, u) => n + u[k], 0);
    const tok = { gen_ai_request_model: 'fake-model', gen_ai_provider_name: 'custom' };
    expect(total(samples, 'gen_ai_client_token_usage_sum', { ...tok, gen_ai_token_type: 'input' })).toBe(sum('prompt_tokens'));
    expect(total(samples, 'gen_ai_client_token_usage_sum', { ...tok, gen_ai_token_type: 'output' })).toBe(sum('completion_tokens'));
    expect(total(samples, 'gen_ai_client_token_usage_count', { ...tok, gen_ai_token_type: 'input' })).toBe(2);
    expect(total(samples, 'aep_cost_total', tok)).toBeCloseTo(usd(MODEL_CALLS.usage[0]) + usd(MODEL_CALLS.usage[1]), 12);
    expect(total(samples, 'aep_events_total', { aep_event_type: 'run.finished' })).toBe(1);
    expect(total(samples, 'aep_hooks_total')).toBeGreaterThan(0);
    // nothing failed on the way out
    expect(total(samples, 'aep_export_failures_total')).toBe(0);
  });

  it('names only contract series and labels (and target_info, when the resource has service.instance.id)', () => {
    for (const s of samples) {
      if (s.name === 'target_info') continue;
      const c = contractSeries.get(s.name);
      expect(c, `${s.name} is not in the contract`).toBeDefined();
      for (const l of Object.keys(s.labels)) expect(c!.labels.has(l), `${s.name} carries ${l}`).toBe(true);
    }
  });

  it('every dashboard expression evaluates in Prometheus, over metrics and labels the daemon really exports', async () => {
    await waitFor('Prometheus to hold 3 scrapes of the daemon', async () => {
      const r = await promQuery(prometheus, `count_over_time(aep_runs_total{job="${job}"}[30s])`);
      return Number(r.data?.result[0]?.value[1] ?? 0) >= 3 ? true : undefined;
    });
    const seen = labelsByName(await scrape(collector, job));
    for (const r of await evaluateDashboard(prometheus, job)) {
      expect(r.result.status, `${r.title}: ${r.expr}: ${r.result.error}`).toBe('success');
      for (const m of r.use.metrics) {
        if (NOT_IN_A_PLAIN_TURN.has(m)) continue;
        expect(seen.has(m), `${r.title}: ${m} is not in the daemon's scrape`).toBe(true);
      }
      // a clean turn has data for every expression except those selecting failures, or metrics it cannot produce
      const selectsFailures = r.use.matchers.some((m) => m.label === 'error_type' || m.label === 'aep_outcome');
      if (!selectsFailures && ![...r.use.metrics].some((m) => NOT_IN_A_PLAIN_TURN.has(m)))
        expect(r.result.data?.result.length ?? 0, `${r.title}: ${r.expr} is empty`).toBeGreaterThan(0);
      const labels = new Set([...r.use.metrics].flatMap((m) => [...(seen.get(m) ?? contractSeries.get(m)!.labels)]));
      for (const l of r.use.labels) {
        if (l === 'error_type') continue; // set on failed calls only
        expect(labels.has(l), `${r.title}: label ${l} is on none of ${[...r.use.metrics].join(', ')}`).toBe(true);
      }
    }
  });

  // E2E_DASHBOARD_PICTURE=<absolute path>.svg: the README's picture, drawn from this real session
  it('the dashboard draws from this session: every panel, at its place', async () => {
    const svg = await expectDrawn(prometheus.url, job);
    if (process.env.E2E_DASHBOARD_PICTURE) writeFileSync(process.env.E2E_DASHBOARD_PICTURE, svg);
  });

  it('the AEP log bridge: dev.aep.* LogRecords carrying the trace ids of the turn', async () => {
    expect(traceIds.size).toBeGreaterThan(0);
    const records = await waitFor('the daemon LogRecords in the collector logs file', () => {
      const all = readLogRecords(collector.logsFile!).filter((r) => r.service === job);
      return all.some((r) => r.eventName === 'dev.aep.run.finished') ? all : undefined;
    });
    for (const r of records) expect(r.eventName, JSON.stringify(r).slice(0, 300)).toMatch(/^dev\.aep\.[a-z_.]+$/);
    const withTrace = records.filter((r) => r.traceId);
    expect(withTrace.length).toBeGreaterThan(0);
    for (const r of withTrace) expect(traceIds.has(r.traceId!), `${r.eventName} trace ${r.traceId}`).toBe(true);
    expect(records.find((r) => r.eventName === 'dev.aep.run.finished')?.traceId).toBeDefined();
  });

  it("each LogRecord at the collector is its history event's AEP-0005 projection (the mapping otlp-expected.json pins), on a span Jaeger serves", async () => {
    const history = new Map([...readLogs(daemon.historyDir).values()].flat().map((e) => [e.id, e as unknown as AepEvent]));
    const records = readFileSync(collector.logsFile!, 'utf8')
      .split('\n')
      .filter(Boolean)
      .flatMap((l) => decodeResourceLogs((JSON.parse(l) as { resourceLogs?: unknown[] }).resourceLogs))
      .filter((r) => r.resource['service.name'] === job);
    expect(records.length).toBe(history.size);
    const spans = new Map<string, Set<string>>();
    for (const r of records) {
      const ev = history.get(r.attributes['aep.event_id'] as string);
      expect(ev, `record ${r.eventName} has no event in the history`).toBeDefined();
      const want = toLogRecord(ev! as never, 'metadata');
      expect({ ...r, resource: undefined }).toEqual({
        timeUnixNano: String(want.time_unix_nano),
        eventName: want.event_name,
        severityText: want.severity_text,
        severityNumber: want.severity_number,
        attributes: want.attributes,
        ...(want.body ? { body: want.body } : {}),
        ...(want.trace_id ? { traceId: want.trace_id, spanId: want.span_id, flags: want.flags } : {}),
        resource: undefined,
      });
      if (r.traceId) spans.set(r.traceId, new Set([...(spans.get(r.traceId) ?? []), r.spanId!]));
    }
    expect(spans.size).toBeGreaterThan(0);
    for (const [traceId, ids] of spans) {
      const served = await waitFor(`trace ${traceId} in Jaeger`, async () => {
        const t = await jaeger.query.getTrace(traceId);
        const have = new Set(t?.spans.map((x) => x.spanID) ?? []);
        return [...ids].every((id) => have.has(id)) ? have : undefined;
      });
      for (const id of ids) expect(served.has(id), `span ${id} of trace ${traceId}`).toBe(true);
    }
  });
});
