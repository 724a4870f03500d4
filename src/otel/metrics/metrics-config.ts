import { z } from 'zod';
import { int, readEnv, reject, setting } from '../../config/read-env.js';
import { otlpShape, refuseGrpcHeaders, signalSettings } from '../otel-env.js';

export const METRICS_EXPORTERS = ['otlp', 'console', 'none'] as const;
export type MetricsExporterKind = (typeof METRICS_EXPORTERS)[number];

/**
 * `OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE` as the OTLP exporter
 * specification defines it: `cumulative` everywhere; `delta` for counters,
 * observable counters and histograms; `lowmemory` delta for synchronous
 * counters and histograms only.
 */
export const TEMPORALITIES = ['cumulative', 'delta', 'lowmemory'] as const;
export type TemporalityPreference = (typeof TEMPORALITIES)[number];

/** The default export timeout (the specification's), never above the interval: the SDK's reader refuses a longer one. */
const DEFAULT_TIMEOUT_MS = 30_000;

/**
 * The metrics signal's settings: the standard `OTEL_METRIC*` variables and the
 * OTLP ones of the metrics signal (otel-env.ts). The OTLP exporter reads its
 * own endpoint, headers, timeout and compression from the environment (the
 * metrics-specific variable over the generic one); they are validated here,
 * so a bad one stops the start instead of being dropped.
 */
const metricsSettings = z
  .looseObject({
    OTEL_METRICS_EXPORTER: setting(`${METRICS_EXPORTERS.join(', ')} (the first of a list is used)`, (raw) =>
      METRICS_EXPORTERS.find((x) => x === raw.split(',')[0]?.trim().toLowerCase()),
    ).optional(),
    ...otlpShape('metrics'),
    OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: setting(TEMPORALITIES.join(', '), (raw) =>
      TEMPORALITIES.find((t) => t === raw.trim().toLowerCase()),
    ).default('cumulative'),
    OTEL_METRIC_EXPORT_INTERVAL: int(100, 24 * 3_600_000).default(60_000),
    OTEL_METRIC_EXPORT_TIMEOUT: int(100, 600_000).optional(),
  })
  .transform((e, ctx) => {
    const otlp = signalSettings(e, 'metrics');
    const exporter = e.OTEL_METRICS_EXPORTER ?? (otlp.endpointSet ? 'otlp' : 'none');
    // only where an OTLP exporter is built (the metrics' own rule); the signal's headers named first
    if (exporter === 'otlp' && otlp.protocol === 'grpc') refuseGrpcHeaders(e, 'metrics', ctx, true);
    const intervalMs = e.OTEL_METRIC_EXPORT_INTERVAL;
    const timeout = e.OTEL_METRIC_EXPORT_TIMEOUT;
    if (timeout !== undefined && timeout > intervalMs)
      reject(ctx, 'OTEL_METRIC_EXPORT_TIMEOUT', `at most OTEL_METRIC_EXPORT_INTERVAL (${intervalMs} ms): an export may not outlast its interval`);
    return {
      exporter,
      /** the OTLP transport: the metrics-specific variable over the generic one, http/protobuf unless set */
      protocol: otlp.protocol,
      temporality: e.OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE,
      intervalMs,
      timeoutMs: timeout ?? Math.min(DEFAULT_TIMEOUT_MS, intervalMs),
    };
  });

export type MetricsConfig = Readonly<z.output<typeof metricsSettings>>;

export function loadMetricsConfig(env: NodeJS.ProcessEnv = process.env): MetricsConfig {
  return readEnv(metricsSettings, env);
}
