import path from 'node:path';
import { z } from 'zod';
import { CAPTURE_LEVELS, type CaptureLevel } from '../../src/capture/levels.js';

const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

const envSchema = z.object({
  OTEL_TRACES_EXPORTER: z.string().optional(),
  OTEL_EXPORTER_OTLP_ENDPOINT: z.string().optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.string().optional(),
  AEP_OTEL_CAPTURE: z.enum(CAPTURE_LEVELS).default('metadata'),
  AEP_OTEL_IDLE_MS: int(1_000, 7 * 24 * 3_600_000).default(3_600_000),
  AEP_OTEL_FILE: z.string().min(1).optional(),
  AEP_OTEL_SHUTDOWN_TIMEOUT_MS: int(100, 120_000).default(5_000),
  AEP_OTEL_MAX_OPEN_UNITS: int(10, 1_000_000).default(10_000),
  OTEL_TRACES_SAMPLER: z
    .enum(['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'])
    .optional(),
  OTEL_TRACES_SAMPLER_ARG: z.coerce.number().min(0).max(1).optional(),
  OTEL_BSP_SCHEDULE_DELAY: int(0, 600_000).default(5_000),
  OTEL_BSP_MAX_QUEUE_SIZE: int(1, 1_000_000).default(2_048),
  OTEL_BSP_MAX_EXPORT_BATCH_SIZE: int(1, 1_000_000).default(512),
  OTEL_BSP_EXPORT_TIMEOUT: int(100, 600_000).default(30_000),
});

export type ExporterKind = 'otlp' | 'file' | 'none';

export interface OtelConfig {
  readonly exporter: ExporterKind;
  readonly file: string;
  readonly ceiling: CaptureLevel;
  readonly idleMs: number;
  readonly shutdownTimeoutMs: number;
  readonly maxOpenUnits: number;
  readonly batch: { scheduledDelayMillis: number; maxQueueSize: number; maxExportBatchSize: number; exportTimeoutMillis: number };
}

/**
 * The mirror's settings, from the standard `OTEL_*` variables plus a few
 * `AEP_OTEL_*` ones. With no exporter named: OTLP when an endpoint is set,
 * else the local OTLP/JSON file, so traces are kept even with no collector.
 */
export function loadOtelConfig(logDir: string, env: NodeJS.ProcessEnv = process.env): OtelConfig {
  // empty values read as unset, so `OTEL_BSP_SCHEDULE_DELAY=` means the default, never 0
  const set = Object.fromEntries(Object.entries(env).filter((e) => typeof e[1] === 'string' && e[1] !== ''));
  const parsed = envSchema.safeParse(set);
  if (!parsed.success) {
    throw new Error(`invalid configuration: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  }
  const e = parsed.data;
  const named = (e.OTEL_TRACES_EXPORTER ?? '').split(',')[0]?.trim().toLowerCase() ?? '';
  let exporter: ExporterKind;
  if (named === 'none') exporter = 'none';
  else if (named === 'otlp') exporter = 'otlp';
  else if (named === 'file') exporter = 'file';
  else if (named === '') exporter = e.OTEL_EXPORTER_OTLP_ENDPOINT || e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ? 'otlp' : 'file';
  else throw new Error(`invalid configuration: OTEL_TRACES_EXPORTER: supported values are otlp, file, none`);
  return {
    exporter,
    file: path.resolve(e.AEP_OTEL_FILE ?? path.join(logDir, 'otel', 'spans.jsonl')),
    ceiling: e.AEP_OTEL_CAPTURE,
    idleMs: e.AEP_OTEL_IDLE_MS,
    shutdownTimeoutMs: e.AEP_OTEL_SHUTDOWN_TIMEOUT_MS,
    maxOpenUnits: e.AEP_OTEL_MAX_OPEN_UNITS,
    batch: {
      scheduledDelayMillis: e.OTEL_BSP_SCHEDULE_DELAY,
      maxQueueSize: e.OTEL_BSP_MAX_QUEUE_SIZE,
      maxExportBatchSize: Math.min(e.OTEL_BSP_MAX_EXPORT_BATCH_SIZE, e.OTEL_BSP_MAX_QUEUE_SIZE),
      exportTimeoutMillis: e.OTEL_BSP_EXPORT_TIMEOUT,
    },
  };
}
