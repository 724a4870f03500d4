import path from 'node:path';
import { z } from 'zod';
import { CAPTURE_LEVELS } from '../core/capture-levels.js';
import { absolutePath, httpUrl, int, listOf, oneOf, readEnv, reject, setting } from '../config/read-env.js';
import { samplerSettings, samplerSpec } from './sampler.js';

export type ExporterKind = 'otlp' | 'file' | 'none';

const EXPORTERS = ['otlp', 'file', 'none'] as const;
/**
 * The OTLP transports (`OTEL_EXPORTER_OTLP_PROTOCOL`), each the official
 * exporter of its own; `http/protobuf` first: the OpenTelemetry default.
 */
export const OTLP_PROTOCOLS = ['http/protobuf', 'http/json', 'grpc'] as const;
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number];
export const protocol = oneOf(OTLP_PROTOCOLS);
/** `key=value`, both percent-decoded; undefined when malformed or the key is empty */
function pair(item: string): [key: string, value: string] | undefined {
  const at = item.indexOf('=');
  try {
    const kv: [string, string] = [decodeURIComponent(item.slice(0, at).trim()), decodeURIComponent(item.slice(at + 1).trim())];
    return at > 0 && kv[0] !== '' ? kv : undefined;
  } catch {
    return undefined;
  }
}
/** as the OTLP exporter reads headers (it drops a pair without a value) */
export const headers = listOf('key=value pairs', (item) => (pair(item)?.[1] ?? '') !== '');
/**
 * As gRPC metadata takes a header (grpc-js throws while the exporter is built
 * otherwise): the key, lower-cased, of `0-9 a-z _ . - :`, not a binary `-bin`
 * one; the value printable ASCII.
 */
export const grpcMetadata = (item: string) => {
  const [key = '', value = ''] = pair(item) ?? [];
  return /^[:0-9a-z_.-]+$/.test(key.toLowerCase()) && !key.toLowerCase().endsWith('-bin') && /^[ -~]*$/.test(value);
};
export const GRPC_HEADERS =
  'key=value pairs gRPC metadata can carry (the OTLP protocol is grpc): keys of a-z 0-9 . _ - : (not ending in -bin), values of printable ASCII';
// eslint-disable-next-line no-control-regex -- refusing control characters is the point
const SERVICE_NAME = /^[^\x00-\x1f\x7f]{1,255}$/;
/** as the SDK's resource detector reads them (one bad pair and it drops them all): one '=', at most 255 characters each side */
const resourceAttribute = (item: string) => item.split('=').length === 2 && (pair(item)?.every((s) => s.length <= 255) ?? false);

/**
 * The mirror's settings: the standard `OTEL_*` variables plus a few
 * `AEP_OTEL_*` ones. The exporter, the resource detector and the OTLP
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
    OTEL_EXPORTER_OTLP_ENDPOINT: httpUrl.optional(),
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: httpUrl.optional(),
    OTEL_EXPORTER_OTLP_PROTOCOL: protocol.optional(),
    OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: protocol.optional(),
    OTEL_EXPORTER_OTLP_HEADERS: headers.optional(),
    OTEL_EXPORTER_OTLP_TRACES_HEADERS: headers.optional(),
    OTEL_EXPORTER_OTLP_TIMEOUT: int(1, 600_000).optional(),
    OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: int(1, 600_000).optional(),
    OTEL_EXPORTER_OTLP_COMPRESSION: oneOf(['gzip', 'none']).optional(),
    OTEL_EXPORTER_OTLP_TRACES_COMPRESSION: oneOf(['gzip', 'none']).optional(),
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
    const otlpProtocol = e.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? e.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf';
    if (otlpProtocol === 'grpc')
      for (const variable of ['OTEL_EXPORTER_OTLP_HEADERS', 'OTEL_EXPORTER_OTLP_TRACES_HEADERS'] as const)
        if (e[variable]?.every(grpcMetadata) === false) reject(ctx, variable, GRPC_HEADERS);
    return {
      // with no exporter named: OTLP when an endpoint is set, else the local OTLP/JSON file, so traces are kept even with no collector
      exporter: e.OTEL_TRACES_EXPORTER ?? (e.OTEL_EXPORTER_OTLP_ENDPOINT || e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ? 'otlp' : 'file'),
      /** the file exporter's output; default under the log dir (below) */
      file: e.AEP_OTEL_FILE,
      ceiling: e.AEP_OTEL_CAPTURE,
      idleMs: e.AEP_OTEL_IDLE_MS,
      shutdownTimeoutMs: e.AEP_OTEL_SHUTDOWN_TIMEOUT_MS,
      maxOpenUnits: e.AEP_OTEL_MAX_OPEN_UNITS,
      sampler: samplerSpec(e),
      /** the OTLP transport: the traces-specific variable over the generic one, http/protobuf unless set (the OpenTelemetry default) */
      protocol: otlpProtocol,
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
