import { z } from 'zod';
import { CAPTURE_LEVELS } from '../../core/capture-levels.js';
import { int, oneOf, readEnv, setting } from '../../config/read-env.js';
import { otlpShape, refuseGrpcHeaders, signalSettings } from '../otel-env.js';

const EXPORTERS = ['otlp', 'none'] as const;

/**
 * The log bridge's settings: the standard `OTEL_LOGS_*` and `OTEL_BLRP_*`
 * variables, the OTLP ones of the logs signal (otel-env.ts), and the bridge's
 * ceiling. The OTLP log exporter reads its endpoint, headers, timeout and
 * compression from the environment itself; they are validated here so a bad
 * one stops the start.
 */
const logsSettings = z
  .looseObject({
    OTEL_LOGS_EXPORTER: setting(`${EXPORTERS.join(', ')} (the first of a list is used)`, (raw) =>
      EXPORTERS.find((x) => x === raw.split(',')[0]?.trim().toLowerCase()),
    ).optional(),
    ...otlpShape('logs'),
    AEP_OTEL_CAPTURE: oneOf(CAPTURE_LEVELS).optional(),
    AEP_OTEL_LOGS_CAPTURE: oneOf(CAPTURE_LEVELS).optional(),
    AEP_OTEL_SHUTDOWN_TIMEOUT_MS: int(100, 120_000).default(5_000),
    OTEL_BLRP_SCHEDULE_DELAY: int(0, 600_000).default(1_000),
    OTEL_BLRP_MAX_QUEUE_SIZE: int(1, 1_000_000).default(2_048),
    OTEL_BLRP_MAX_EXPORT_BATCH_SIZE: int(1, 1_000_000).default(512),
    OTEL_BLRP_EXPORT_TIMEOUT: int(100, 600_000).default(30_000),
  })
  .transform((e, ctx) => {
    const otlp = signalSettings(e, 'logs');
    if (otlp.protocol === 'grpc') refuseGrpcHeaders(e, 'logs', ctx);
    return {
      // unnamed: on when an OTLP endpoint is set (there is somewhere to send to), off otherwise
      exporter: e.OTEL_LOGS_EXPORTER ?? (otlp.endpointSet ? 'otlp' : 'none'),
      /** the logs-specific variable over the generic one, http/protobuf unless set */
      protocol: otlp.protocol,
      /** max_capture of AEP-0005 §3.3: content above it never leaves the process; the spans' ceiling unless set */
      ceiling: e.AEP_OTEL_LOGS_CAPTURE ?? e.AEP_OTEL_CAPTURE ?? 'metadata',
      shutdownTimeoutMs: e.AEP_OTEL_SHUTDOWN_TIMEOUT_MS,
      batch: {
        scheduledDelayMillis: e.OTEL_BLRP_SCHEDULE_DELAY,
        maxQueueSize: e.OTEL_BLRP_MAX_QUEUE_SIZE,
        maxExportBatchSize: Math.min(e.OTEL_BLRP_MAX_EXPORT_BATCH_SIZE, e.OTEL_BLRP_MAX_QUEUE_SIZE),
        exportTimeoutMillis: e.OTEL_BLRP_EXPORT_TIMEOUT,
      },
    };
  });

export type LogsConfig = Readonly<z.output<typeof logsSettings>>;

export function loadLogsConfig(env: NodeJS.ProcessEnv = process.env): LogsConfig {
  return readEnv(logsSettings, env);
}
