/** OTLP/JSON `AnyValue` and attribute lists, decoded to plain values (tests read spans from two places). */
export type AnyValue = {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
  arrayValue?: { values?: AnyValue[] };
  kvlistValue?: { values?: { key: string; value?: AnyValue }[] };
};

export const decodeValue = (v: AnyValue | undefined): unknown =>
  v === undefined
    ? undefined
    : (v.stringValue ??
      (v.intValue !== undefined ? Number(v.intValue) : undefined) ??
      v.boolValue ??
      v.doubleValue ??
      v.arrayValue?.values?.map(decodeValue) ??
      (v.kvlistValue ? decodeAttrs(v.kvlistValue.values) : undefined));

export const decodeAttrs = (list: { key: string; value?: AnyValue }[] | undefined): Record<string, unknown> =>
  Object.fromEntries((list ?? []).map((a) => [a.key, decodeValue(a.value)]));

/** A span as OTLP/JSON carries it (the receiver's view and Jaeger's api_v3 view alike), decoded. */
export interface DecodedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: Record<string, unknown>;
  links: { traceId: string; spanId: string; attributes: Record<string, unknown> }[];
  events: { name: string; attributes: Record<string, unknown> }[];
  status: { code?: number | string; message?: string };
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  resource: Record<string, unknown>;
}

/** Every span of an OTLP/JSON `resourceSpans` list, flattened, its resource attached. */
export function decodeResourceSpans(resourceSpans: any[] | undefined): DecodedSpan[] {
  const out: DecodedSpan[] = [];
  for (const rs of resourceSpans ?? []) {
    const resource = decodeAttrs(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        out.push({
          traceId: s.traceId,
          spanId: s.spanId,
          ...(s.parentSpanId ? { parentSpanId: s.parentSpanId } : {}),
          name: s.name,
          attributes: decodeAttrs(s.attributes),
          links: (s.links ?? []).map((l: any) => ({ traceId: l.traceId, spanId: l.spanId, attributes: decodeAttrs(l.attributes) })),
          events: (s.events ?? []).map((e: any) => ({ name: e.name, attributes: decodeAttrs(e.attributes) })),
          status: s.status ?? {},
          startTimeUnixNano: s.startTimeUnixNano,
          endTimeUnixNano: s.endTimeUnixNano,
          resource,
        });
      }
    }
  }
  return out;
}

/** A LogRecord as OTLP/JSON carries it, decoded (ids hex, time as decimal nanoseconds). */
export interface DecodedLog {
  timeUnixNano: string;
  eventName?: string;
  severityText?: string;
  severityNumber?: number;
  attributes: Record<string, unknown>;
  body?: unknown;
  traceId?: string;
  spanId?: string;
  flags?: number;
  resource: Record<string, unknown>;
}

/** Every LogRecord of an OTLP/JSON `resourceLogs` list, flattened, its resource attached. */
export function decodeResourceLogs(resourceLogs: any[] | undefined): DecodedLog[] {
  const out: DecodedLog[] = [];
  for (const rl of resourceLogs ?? []) {
    const resource = decodeAttrs(rl.resource?.attributes);
    for (const sl of rl.scopeLogs ?? []) {
      for (const l of sl.logRecords ?? []) {
        out.push({
          timeUnixNano: String(l.timeUnixNano),
          ...(l.eventName ? { eventName: l.eventName } : {}),
          ...(l.severityText ? { severityText: l.severityText } : {}),
          ...(l.severityNumber !== undefined ? { severityNumber: Number(l.severityNumber) } : {}),
          attributes: decodeAttrs(l.attributes),
          ...(l.body !== undefined ? { body: decodeValue(l.body) } : {}),
          ...(l.traceId ? { traceId: l.traceId } : {}),
          ...(l.spanId ? { spanId: l.spanId } : {}),
          ...(l.flags !== undefined ? { flags: Number(l.flags) } : {}),
          resource,
        });
      }
    }
  }
  return out;
}
