/**
 * The metrics hermes-aep emits (issue 14's contract, in OpenTelemetry names)
 * and what they become behind the collector's `prometheus` exporter with the
 * translation otel-collector.yaml pins (UnderscoreEscapingWithSuffixes).
 *
 * One table for the dashboard's unit test (every metric and label a PromQL
 * expression names must come from here) and the e2e pipeline test (the real
 * collector's scrape must hold what this table predicts).
 *
 * The translation rules, as measured against the 0.158.0 collector
 * (test/e2e/metrics-pipeline.test.ts re-checks them on every run):
 *   - dots in metric and attribute names become underscores;
 *   - a unit in braces (`{token}`, `{run}`, `{USD}`) adds nothing; `s` adds `_seconds`;
 *   - a monotonic sum (Counter, ObservableCounter) ends in `_total`;
 *   - a histogram is three families' worth of series: `_bucket` (with `le`), `_sum`, `_count`;
 *   - resource `service.name` is the `job` label (`instance` from service.instance.id, empty when unset),
 *     and every series carries the scope labels `otel_scope_name`, `otel_scope_version`, `otel_scope_schema_url`.
 */

export type InstrumentKind = 'counter' | 'histogram' | 'gauge';

export interface ContractMetric {
  /** the OpenTelemetry instrument name */
  readonly otel: string;
  readonly kind: InstrumentKind;
  readonly unit: string;
  /** the attribute names a data point may carry (OpenTelemetry spelling) */
  readonly attributes: readonly string[];
  /** attribute values fixed by the contract (an enum), by attribute */
  readonly values?: Readonly<Record<string, readonly string[]>>;
}

const OUTCOME_RUN = ['finished', 'failed', 'cancelled'] as const;
const OUTCOME_TOOL = ['ok', 'failed', 'denied'] as const;
const RESOLUTION = ['answered', 'timeout', 'dismissed', 'auto'] as const;

export const METRICS_CONTRACT: readonly ContractMetric[] = [
  {
    otel: 'gen_ai.client.token.usage',
    kind: 'histogram',
    unit: '{token}',
    attributes: [
      'gen_ai.operation.name',
      'gen_ai.provider.name',
      'gen_ai.token.type',
      'gen_ai.request.model',
      'gen_ai.response.model',
      'server.address',
      'server.port',
    ],
    values: { 'gen_ai.operation.name': ['chat'], 'gen_ai.token.type': ['input', 'output'] },
  },
  {
    otel: 'gen_ai.client.operation.duration',
    kind: 'histogram',
    unit: 's',
    attributes: [
      'gen_ai.operation.name',
      'gen_ai.provider.name',
      'gen_ai.request.model',
      'gen_ai.response.model',
      'server.address',
      'server.port',
      'gen_ai.agent.name',
      'gen_ai.tool.name',
      'error.type',
    ],
    values: { 'gen_ai.operation.name': ['chat', 'invoke_agent', 'execute_tool'] },
  },
  { otel: 'aep.runs', kind: 'counter', unit: '{run}', attributes: ['aep.outcome', 'gen_ai.agent.name'], values: { 'aep.outcome': OUTCOME_RUN } },
  { otel: 'aep.tool.calls', kind: 'counter', unit: '{call}', attributes: ['gen_ai.tool.name', 'aep.outcome'], values: { 'aep.outcome': OUTCOME_TOOL } },
  {
    otel: 'aep.attention.cards',
    kind: 'counter',
    unit: '{card}',
    attributes: ['aep.attention.kind', 'aep.attention.resolution'],
    values: { 'aep.attention.resolution': RESOLUTION },
  },
  {
    otel: 'aep.attention.wait',
    kind: 'histogram',
    unit: 's',
    attributes: ['aep.attention.kind', 'aep.attention.resolution'],
    values: { 'aep.attention.resolution': RESOLUTION },
  },
  { otel: 'aep.approvals', kind: 'counter', unit: '{approval}', attributes: ['aep.approval.choice'] },
  { otel: 'aep.cost', kind: 'counter', unit: '{USD}', attributes: ['gen_ai.provider.name', 'gen_ai.request.model'] },
  { otel: 'aep.events', kind: 'counter', unit: '{event}', attributes: ['aep.event.type'] },
  { otel: 'aep.hooks', kind: 'counter', unit: '{hook}', attributes: ['hermes.hook'] },
  { otel: 'aep.queue.depth', kind: 'gauge', unit: '{event}', attributes: ['aep.sink'] },
  { otel: 'aep.dropped', kind: 'counter', unit: '{event}', attributes: ['aep.sink', 'aep.reason'] },
  { otel: 'aep.export.failures', kind: 'counter', unit: '{request}', attributes: ['aep.signal'], values: { 'aep.signal': ['traces', 'metrics', 'logs'] } },
];

/** The labels the exporter puts on every series, whatever the metric. */
export const COMMON_LABELS: readonly string[] = ['job', 'instance', 'otel_scope_name', 'otel_scope_version', 'otel_scope_schema_url'];

/** An attribute or metric name as a Prometheus label/metric name (dots and other non-word characters to `_`). */
export const promName = (otel: string): string => otel.replace(/[^a-zA-Z0-9_]/g, '_');

const UNIT_SUFFIX: Readonly<Record<string, string>> = { s: 'seconds', ms: 'milliseconds', By: 'bytes', '1': 'ratio' };

/** The base Prometheus name of a contract metric (no `_bucket`/`_sum`/`_count`; with `_total` for counters). */
export function promBase(m: ContractMetric): string {
  let name = promName(m.otel);
  const suffix = m.unit.startsWith('{') ? undefined : UNIT_SUFFIX[m.unit];
  if (suffix && !name.endsWith(`_${suffix}`)) name += `_${suffix}`;
  if (m.kind === 'counter') name += '_total';
  return name;
}

export interface PromSeriesName {
  readonly metric: ContractMetric;
  /** the labels a series of this name may carry */
  readonly labels: ReadonlySet<string>;
}

/** Every series name the contract produces in Prometheus (histograms: `_bucket`, `_sum`, `_count`), with its labels. */
export function promSeriesNames(): ReadonlyMap<string, PromSeriesName> {
  const out = new Map<string, PromSeriesName>();
  for (const m of METRICS_CONTRACT) {
    const base = promBase(m);
    const attrs = [...COMMON_LABELS, ...m.attributes.map(promName)];
    if (m.kind === 'histogram') {
      out.set(`${base}_bucket`, { metric: m, labels: new Set([...attrs, 'le']) });
      out.set(`${base}_sum`, { metric: m, labels: new Set(attrs) });
      out.set(`${base}_count`, { metric: m, labels: new Set(attrs) });
    } else {
      out.set(base, { metric: m, labels: new Set(attrs) });
    }
  }
  return out;
}
