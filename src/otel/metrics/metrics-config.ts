import { z } from 'zod';
import { httpUrl, int, oneOf, readEnv, reject, setting } from '../../config/read-env.js';
import { GRPC_HEADERS, grpcMetadata, headers, protocol } from '../otel-config.js';

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
 * The metrics signal's settings: the standard `OTEL_*` variables. The OTLP
 * exporter reads its own endpoint, headers, timeout and compression from the
 * environment (the metrics-specific variable over the generic one); the
 * metrics-specific ones are validated here (the generic ones with the traces
 * settings), so a bad one stops the start instead of being dropped.
 */
const metricsSettings = z
  .looseObject({
    OTEL_METRICS_EXPORTER: setting(`${METRICS_EXPORTERS.join(', ')} (the first of a list is used)`, (raw) =>
      METRICS_EXPORTERS.find((x) => x === raw.split(',')[0]?.trim().toLowerCase()),
    ).optional(),
    OTEL_EXPORTER_OTLP_ENDPOINT: z.string().optional(),
    OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: httpUrl.optional(),
    OTEL_EXPORTER_OTLP_PROTOCOL: protocol.optional(),
    OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: protocol.optional(),
    // the generic headers are checked with the traces settings; read here only for the gRPC rule
    OTEL_EXPORTER_OTLP_HEADERS: z.string().optional(),
    OTEL_EXPORTER_OTLP_METRICS_HEADERS: headers.optional(),
    OTEL_EXPORTER_OTLP_METRICS_TIMEOUT: int(1, 600_000).optional(),
    OTEL_EXPORTER_OTLP_METRICS_COMPRESSION: oneOf(['gzip', 'none']).optional(),
    OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: setting(TEMPORALITIES.join(', '), (raw) =>
      TEMPORALITIES.find((t) => t === raw.trim().toLowerCase()),
    ).default('cumulative'),
    OTEL_METRIC_EXPORT_INTERVAL: int(100, 24 * 3_600_000).default(60_000),
    OTEL_METRIC_EXPORT_TIMEOUT: int(100, 600_000).optional(),
  })
  .transform((e, ctx) => {
    const otlpProtocol = e.OTEL_EXPORTER_OTLP_METRICS_PROTOCOL ?? e.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf';
    const exporter = e.OTEL_METRICS_EXPORTER ?? (e.OTEL_EXPORTER_OTLP_ENDPOINT || e.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT ? 'otlp' : 'none');
    if (exporter === 'otlp' && otlpProtocol === 'grpc') {
      if (e.OTEL_EXPORTER_OTLP_METRICS_HEADERS?.every(grpcMetadata) === false) reject(ctx, 'OTEL_EXPORTER_OTLP_METRICS_HEADERS', GRPC_HEADERS);
      const generic = e.OTEL_EXPORTER_OTLP_HEADERS?.split(',')
        .map((x) => x.trim())
        .filter(Boolean);
      if (generic?.every(grpcMetadata) === false) reject(ctx, 'OTEL_EXPORTER_OTLP_HEADERS', GRPC_HEADERS);
    }
    const intervalMs = e.OTEL_METRIC_EXPORT_INTERVAL;
    const timeout = e.OTEL_METRIC_EXPORT_TIMEOUT;
    if (timeout !== undefined && timeout > intervalMs)
      reject(ctx, 'OTEL_METRIC_EXPORT_TIMEOUT', `at most OTEL_METRIC_EXPORT_INTERVAL (${intervalMs} ms): an export may not outlast its interval`);
    return {
      exporter,
      /** the OTLP transport: the metrics-specific variable over the generic one, http/protobuf unless set */
      protocol: otlpProtocol,
      temporality: e.OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE,
      intervalMs,
      timeoutMs: timeout ?? Math.min(DEFAULT_TIMEOUT_MS, intervalMs),
    };
  });

export type MetricsConfig = Readonly<z.output<typeof metricsSettings>>;

export function loadMetricsConfig(env: NodeJS.ProcessEnv = process.env): MetricsConfig {
  return readEnv(metricsSettings, env);
}
