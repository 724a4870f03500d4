import path from 'node:path';
import { z } from 'zod';
import { CAPTURE_LEVELS } from '../core/capture-levels.js';
import { absolutePath, int, listOf, oneOf, readEnv, setting } from '../config/read-env.js';
import { otlpShape, pair, refuseGrpcHeaders, signalSettings } from './otel-env.js';
import { samplerSettings, samplerSpec } from './sampler.js';

export type ExporterKind = 'otlp' | 'file' | 'none';

const EXPORTERS = ['otlp', 'file', 'none'] as const;
// eslint-disable-next-line no-control-regex -- refusing control characters is the point
const SERVICE_NAME = /^[^\x00-\x1f\x7f]{1,255}$/;
/** as the SDK's resource detector reads them (one bad pair and it drops them all): one '=', at most 255 characters each side */
const resourceAttribute = (item: string) => item.split('=').length === 2 && (pair(item)?.every((s) => s.length <= 255) ?? false);

/**
 * The mirror's settings: the standard `OTEL_*` variables (the OTLP ones of
 * the traces signal from otel-env.ts) plus a few `AEP_OTEL_*` ones. The
 * exporter, the resource detector and the OTLP
 * transport read their own standard variables (endpoint, headers, timeout,
 * compression, service name, resource attributes) from the environment;
 * they are validated here, so a bad one stops the start instead of being
 * dropped with a diagnostic nobody sees.
 */
const otelSettings = z
  .looseObject({
    OTEL_TRACES_EXPORTER: setting(`${EXPORTERS.join(', ')} (the first of a list is used)`, (raw) =>
      EXPORTERS.find((x) => x === raw.split(',')[0]?.trim().toLowerCase()),
    ).optional(),
    ...otlpShape('traces'),
    OTEL_SERVICE_NAME: setting('a name of at most 255 characters, no control characters', (raw) => (SERVICE_NAME.test(raw) ? raw : undefined)).optional(),
    OTEL_RESOURCE_ATTRIBUTES: listOf("key=value pairs ('=' and ',' percent-encoded, at most 255 characters each)", resourceAttribute).optional(),
    AEP_OTEL_CAPTURE: oneOf(CAPTURE_LEVELS).default('metadata'),
    AEP_OTEL_IDLE_MS: int(1_000, 7 * 24 * 3_600_000).default(3_600_000),
    AEP_OTEL_FILE: absolutePath.optional(),
    AEP_OTEL_SHUTDOWN_TIMEOUT_MS: int(100, 120_000).default(5_000),
    AEP_OTEL_MAX_OPEN_UNITS: int(10, 1_000_000).default(10_000),
    ...samplerSettings,
    OTEL_BSP_SCHEDULE_DELAY: int(0, 600_000).default(5_000),
    OTEL_BSP_MAX_QUEUE_SIZE: int(1, 1_000_000).default(2_048),
    OTEL_BSP_MAX_EXPORT_BATCH_SIZE: int(1, 1_000_000).default(512),
    OTEL_BSP_EXPORT_TIMEOUT: int(100, 600_000).default(30_000),
  })
  .transform((e, ctx) => {
    const otlp = signalSettings(e, 'traces');
    if (otlp.protocol === 'grpc') refuseGrpcHeaders(e, 'traces', ctx);
    return {
      // with no exporter named: OTLP when an endpoint is set, else the local OTLP/JSON file, so traces are kept even with no collector
      exporter: e.OTEL_TRACES_EXPORTER ?? (otlp.endpointSet ? 'otlp' : 'file'),
      /** the file exporter's output; default under the log dir (below) */
      file: e.AEP_OTEL_FILE,
      ceiling: e.AEP_OTEL_CAPTURE,
      idleMs: e.AEP_OTEL_IDLE_MS,
      shutdownTimeoutMs: e.AEP_OTEL_SHUTDOWN_TIMEOUT_MS,
      maxOpenUnits: e.AEP_OTEL_MAX_OPEN_UNITS,
      sampler: samplerSpec(e),
      /** the OTLP transport: the traces-specific variable over the generic one, http/protobuf unless set (the OpenTelemetry default) */
      protocol: otlp.protocol,
      batch: {
        scheduledDelayMillis: e.OTEL_BSP_SCHEDULE_DELAY,
        maxQueueSize: e.OTEL_BSP_MAX_QUEUE_SIZE,
        maxExportBatchSize: Math.min(e.OTEL_BSP_MAX_EXPORT_BATCH_SIZE, e.OTEL_BSP_MAX_QUEUE_SIZE),
        exportTimeoutMillis: e.OTEL_BSP_EXPORT_TIMEOUT,
      },
    };
  });

export type OtelConfig = Readonly<Omit<z.output<typeof otelSettings>, 'file'> & { file: string }>;

export function loadOtelConfig(historyDir: string, env: NodeJS.ProcessEnv = process.env): OtelConfig {
  const o = readEnv(otelSettings, env);
  return { ...o, file: o.file ?? path.resolve(historyDir, 'otel', 'spans.jsonl') };
}
