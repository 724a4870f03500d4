/**
 * The AEP → OTLP LogRecord projection (AEP-0005 §3), as plain data: no I/O,
 * no clock, no SDK. The log sink feeds the SDK from it, and the conformance
 * test compares it with the pinned projections field by field.
 */
import { downlevel } from '../../capture/downlevel.js';
import { captureRank, DEFAULT_CAPTURE, isCaptureLevel, type CaptureLevel } from '../../core/capture-levels.js';
import type { CaptureEvent } from '../../capture/types.js';

/** The exported identity of an AEP type: the same string the CloudEvents bridge uses. */
export const EVENT_NAME_PREFIX = 'dev.aep.';

/** The six AEP severities and their OTLP text and number (AEP-0005 §3.4). */
export const SEVERITY_MAP = {
  debug: { text: 'DEBUG', number: 5 },
  info: { text: 'INFO', number: 9 },
  notice: { text: 'INFO2', number: 10 },
  warning: { text: 'WARN', number: 13 },
  error: { text: 'ERROR', number: 17 },
  critical: { text: 'FATAL', number: 21 },
} as const;
export type AepSeverity = keyof typeof SEVERITY_MAP;
/** The envelope default when an event omits `severity` (AEP-0001 §5). */
export const DEFAULT_SEVERITY: AepSeverity = 'info';

/** The envelope members mapped to attributes when present, in the order §3.2 lists them. */
const OPTIONAL_ATTRS: readonly (readonly [member: string, attribute: string])[] = [
  ['session', 'aep.session_id'],
  ['run', 'aep.run_id'],
  ['step', 'aep.step'],
  ['seq', 'aep.sequence'],
  ['epoch', 'aep.epoch'],
  ['cause', 'aep.causation_id'],
  ['subject', 'aep.subject'],
];

/** `data` members with this prefix become top-level attributes verbatim (the OTel-mirror rule). */
const GEN_AI_PREFIX = 'gen_ai.';

/** One AEP event as the bridge reads it: the envelope members it maps, any others ignored. */
export type BridgeEvent = CaptureEvent & {
  readonly id: string;
  readonly time: string;
  readonly source: string;
  readonly severity?: string;
  readonly traceparent?: string;
};

/** The W3C trace context of an event's `traceparent`, as OTLP carries it. */
export interface TraceFields {
  /** 32 lower-case hex digits */
  readonly trace_id: string;
  /** 16 lower-case hex digits */
  readonly span_id: string;
  /** the trace-flags byte */
  readonly flags: number;
}

/** One LogRecord, described: the fields of OTLP's LogRecord plus the resource it belongs to. */
export interface AepLogRecord extends Partial<TraceFields> {
  /** epoch nanoseconds; 0 (OTLP's "unknown") when `time` is not RFC 3339 */
  readonly time_unix_nano: bigint;
  readonly event_name: string;
  readonly severity_text: string;
  readonly severity_number: number;
  readonly resource: { readonly 'service.name': string };
  /** envelope-derived `aep.*` attributes, then the `gen_ai.*` members of the exported data */
  readonly attributes: Readonly<Record<string, unknown>>;
  /** the rest of the exported data (an AnyValue map); absent when nothing remains */
  readonly body?: Readonly<Record<string, unknown>>;
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9})\d*)?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/** Epoch nanoseconds of an RFC 3339 time, exactly (no float arithmetic); undefined when it is not one. */
export function unixNanos(time: string): bigint | undefined {
  const m = RFC3339.exec(time);
  if (!m) return undefined;
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) return undefined;
  // setUTCFullYear, unlike Date.UTC, reads years 0-99 as written
  const date = new Date(0);
  date.setUTCFullYear(y, mo - 1, d);
  if (date.getUTCMonth() !== mo - 1) return undefined; // a day past the month's end (Feb 30)
  const ms = date.setUTCHours(h, mi, s, 0);
  const offsetMin = m[8] !== undefined ? 0 : (m[9] === '-' ? -1 : 1) * (Number(m[10]) * 60 + Number(m[11]));
  const fraction = BigInt((m[7] ?? '').padEnd(9, '0'));
  return (BigInt(ms) / 1000n - BigInt(offsetMin * 60)) * 1_000_000_000n + fraction;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/** The fields of a W3C `traceparent`; undefined when it is malformed or its ids are invalid (all zero). */
export function parseTraceparent(traceparent: unknown): TraceFields | undefined {
  if (typeof traceparent !== 'string') return undefined;
  const m = TRACEPARENT.exec(traceparent);
  if (!m) return undefined;
  const [, version, traceId, spanId, flags, rest] = m as unknown as [string, string, string, string, string, string | undefined];
  // version ff is invalid; version 00 has exactly four fields (later versions may append more)
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  if (/^0+$/.test(traceId) || /^0+$/.test(spanId)) return undefined;
  return { trace_id: traceId, span_id: spanId, flags: Number.parseInt(flags, 16) };
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The level an event claims: absent is the envelope default, malformed is read as `full` (fail closed). */
function claimed(ev: BridgeEvent): CaptureLevel {
  const c: unknown = ev.capture;
  if (c === undefined) return DEFAULT_CAPTURE;
  return isCaptureLevel(c) ? c : 'full';
}

/**
 * The data an exporter with ceiling `maxCapture` may send (AEP-0005 §3.3):
 * at or below the ceiling, the event's own data (it already honours its
 * level); above it, nothing: the event is down-leveled to `none`, which
 * exports envelope-derived attributes only. Stripping everything is a legal
 * down-level (AEP-0001 §8.2b); a malformed ceiling is read as `none`.
 */
export function exportedData(ev: BridgeEvent, maxCapture: CaptureLevel): Record<string, unknown> | undefined {
  const ceiling: CaptureLevel = isCaptureLevel(maxCapture) ? maxCapture : 'none';
  const level = captureRank(claimed(ev)) > captureRank(ceiling) ? 'none' : ceiling;
  const data = downlevel(ev, level).data;
  return isRecord(data) ? data : undefined;
}

/**
 * The LogRecord of one AEP event (AEP-0005 §3.2): `event_name` from `type`,
 * severity per §3.4, trace fields from a valid `traceparent` only, the
 * resource's `service.name` = the emitting agent, envelope members as `aep.*`
 * attributes (optional ones only when present; `aep.capture` is the level the
 * emitter declared), the `gen_ai.*` members of the exported data as
 * attributes verbatim and the rest as `body`.
 */
export function toLogRecord(ev: BridgeEvent, maxCapture: CaptureLevel): AepLogRecord {
  const severity = typeof ev.severity === 'string' && Object.hasOwn(SEVERITY_MAP, ev.severity) ? (ev.severity as AepSeverity) : DEFAULT_SEVERITY;
  const attributes: Record<string, unknown> = {
    'aep.agent_id': ev.agent,
    'aep.event_id': ev.id,
    'aep.capture': ev.capture ?? DEFAULT_CAPTURE,
    'aep.source': ev.source,
  };
  for (const [member, attribute] of OPTIONAL_ATTRS) {
    const value = ev[member];
    if (value !== undefined) attributes[attribute] = value;
  }
  const body: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(exportedData(ev, maxCapture) ?? {})) {
    if (key.startsWith(GEN_AI_PREFIX)) attributes[key] = value;
    else Object.defineProperty(body, key, { value, enumerable: true, writable: true, configurable: true });
  }
  const trace = parseTraceparent(ev.traceparent);
  return {
    time_unix_nano: unixNanos(ev.time) ?? 0n,
    event_name: EVENT_NAME_PREFIX + ev.type,
    severity_text: SEVERITY_MAP[severity].text,
    severity_number: SEVERITY_MAP[severity].number,
    resource: { 'service.name': ev.agent },
    attributes,
    ...(trace ?? {}),
    ...(Object.keys(body).length > 0 ? { body } : {}),
  };
}
