import { z } from 'zod';
import { httpUrl, int, listOf, oneOf, readEnv, reject } from '../config/read-env.js';

/**
 * The one reader of the OTLP exporter variables (`OTEL_EXPORTER_OTLP_*`) for
 * the three signals, with the OpenTelemetry specification's precedence: the
 * signal's own variable over the generic one. Each signal's settings (traces,
 * metrics, logs) take their OTLP part from here: the variables, as a schema
 * fragment so a bad one is named with the signal's other settings, and the
 * settings they resolve to.
 */
export const SIGNALS = ['traces', 'metrics', 'logs'] as const;
export type Signal = (typeof SIGNALS)[number];

/**
 * The OTLP transports (`OTEL_EXPORTER_OTLP_PROTOCOL`), each the official
 * exporter of its own; `http/protobuf` first: the OpenTelemetry default.
 */
export const OTLP_PROTOCOLS = ['http/protobuf', 'http/json', 'grpc'] as const;
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number];
export const protocol = oneOf(OTLP_PROTOCOLS);

export const COMPRESSIONS = ['gzip', 'none'] as const;
export type Compression = (typeof COMPRESSIONS)[number];

/** `key=value`, both percent-decoded; undefined when malformed or the key is empty */
export function pair(item: string): [key: string, value: string] | undefined {
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

/** The specification's defaults: the collector on this host, 10 s, uncompressed. */
export const DEFAULT_HTTP_ENDPOINT = 'http://localhost:4318';
export const DEFAULT_GRPC_ENDPOINT = 'http://localhost:4317';
export const DEFAULT_TIMEOUT_MS = 10_000;

const SETTINGS = ['ENDPOINT', 'PROTOCOL', 'HEADERS', 'TIMEOUT', 'COMPRESSION'] as const;
type Setting = (typeof SETTINGS)[number];

/** The two variables of one setting, the signal's own first: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `OTEL_EXPORTER_OTLP_ENDPOINT`. */
export function otlpVariables(signal: Signal, setting: Setting): [own: string, generic: string] {
  return [`OTEL_EXPORTER_OTLP_${signal.toUpperCase()}_${setting}`, `OTEL_EXPORTER_OTLP_${setting}`];
}

const RULES = {
  ENDPOINT: httpUrl.optional(),
  PROTOCOL: protocol.optional(),
  HEADERS: headers.optional(),
  TIMEOUT: int(1, 600_000).optional(),
  COMPRESSION: oneOf(COMPRESSIONS).optional(),
};

type Shape<S extends Signal> = { [K in Setting as `OTEL_EXPORTER_OTLP_${K}`]: (typeof RULES)[K] } & {
  [K in Setting as `OTEL_EXPORTER_OTLP_${Uppercase<S>}_${K}`]: (typeof RULES)[K];
};

/**
 * The schema fragment of one signal's OTLP variables, generic then the
 * signal's own for each setting (the order a bad one is named in). Spread it
 * into the signal's settings object; `signalSettings` reads what it parsed.
 */
export function otlpShape<S extends Signal>(signal: S): Shape<S> {
  return Object.fromEntries(
    SETTINGS.flatMap((s) => {
      const [own, generic] = otlpVariables(signal, s);
      return [
        [generic, RULES[s]],
        [own, RULES[s]],
      ];
    }),
  ) as Shape<S>;
}

/** The OTLP exporter settings of one signal, resolved. */
export interface SignalSettings {
  readonly signal: Signal;
  /** the signal's protocol over the generic one; http/protobuf unless set */
  readonly protocol: OtlpProtocol;
  /** whether an endpoint is set (the signal's or the generic one): an unnamed exporter is OTLP then */
  readonly endpointSet: boolean;
  /**
   * Where the signal is sent. The signal's own endpoint as written; else, for
   * the HTTP protocols, the generic endpoint with `v1/<signal>` appended
   * (after one `/`); for gRPC the generic endpoint as written; else the default.
   */
  readonly endpoint: string;
  /** the generic headers, then the signal's own (a key in both takes the signal's value) */
  readonly headers: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
  readonly compression: Compression;
}

/** What `otlpShape` parsed: the values by variable name. */
type Parsed = Readonly<Record<string, unknown>>;

function chosen<T>(e: Parsed, signal: Signal, setting: Setting): T | undefined {
  const [own, generic] = otlpVariables(signal, setting);
  return (e[own] ?? e[generic]) as T | undefined;
}

function headerRecord(items: readonly string[] | undefined): Record<string, string> {
  return Object.fromEntries((items ?? []).map(pair).filter((kv) => kv !== undefined));
}

/** The signal's OTLP settings from the values `otlpShape(signal)` parsed. */
export function signalSettings(e: Parsed, signal: Signal): SignalSettings {
  const otlpProtocol = chosen<OtlpProtocol>(e, signal, 'PROTOCOL') ?? 'http/protobuf';
  const [ownEndpoint, genericEndpoint] = otlpVariables(signal, 'ENDPOINT').map((v) => e[v] as string | undefined);
  const [ownHeaders, genericHeaders] = otlpVariables(signal, 'HEADERS').map((v) => e[v] as string[] | undefined);
  return {
    signal,
    protocol: otlpProtocol,
    endpointSet: Boolean(ownEndpoint || genericEndpoint),
    endpoint: ownEndpoint ?? endpointFrom(genericEndpoint, signal, otlpProtocol),
    headers: { ...headerRecord(genericHeaders), ...headerRecord(ownHeaders) },
    timeoutMs: chosen<number>(e, signal, 'TIMEOUT') ?? DEFAULT_TIMEOUT_MS,
    compression: chosen<Compression>(e, signal, 'COMPRESSION') ?? 'none',
  };
}

function endpointFrom(generic: string | undefined, signal: Signal, otlpProtocol: OtlpProtocol): string {
  if (otlpProtocol === 'grpc') return generic ?? DEFAULT_GRPC_ENDPOINT;
  const base = generic ?? DEFAULT_HTTP_ENDPOINT;
  return `${base.endsWith('/') ? base : `${base}/`}v1/${signal}`;
}

/**
 * With gRPC, headers gRPC metadata cannot carry are refused (grpc-js throws
 * while the exporter is built otherwise), naming each variable that holds one:
 * the generic one first unless `ownFirst`.
 */
export function refuseGrpcHeaders(e: Parsed, signal: Signal, ctx: z.RefinementCtx, ownFirst = false): void {
  const variables = otlpVariables(signal, 'HEADERS');
  for (const variable of ownFirst ? variables : variables.reverse())
    if ((e[variable] as string[] | undefined)?.every(grpcMetadata) === false) reject(ctx, variable, GRPC_HEADERS);
}

/**
 * One signal's OTLP settings read from the environment on their own: the
 * variables checked (a bad one is a ConfigError naming it), the gRPC rule
 * applied when the protocol is grpc.
 */
export function readSignalSettings(env: NodeJS.ProcessEnv, signal: Signal): SignalSettings {
  const schema = z.looseObject(otlpShape(signal)).transform((e, ctx) => {
    const settings = signalSettings(e, signal);
    if (settings.protocol === 'grpc') refuseGrpcHeaders(e, signal, ctx);
    return settings;
  });
  return readEnv(schema, env);
}
