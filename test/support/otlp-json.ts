/** OTLP/JSON `AnyValue` and attribute lists, decoded to plain values (tests read spans from two places). */
export type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number; arrayValue?: { values?: AnyValue[] } };

export const decodeValue = (v: AnyValue | undefined): unknown =>
  v === undefined
    ? undefined
    : (v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : undefined) ?? v.boolValue ?? v.doubleValue ?? v.arrayValue?.values?.map(decodeValue));

export const decodeAttrs = (list: { key: string; value?: AnyValue }[] | undefined): Record<string, unknown> =>
  Object.fromEntries((list ?? []).map((a) => [a.key, decodeValue(a.value)]));

/** A span as OTLP/JSON carries it (the receiver's view and Jaeger's api_v3 view alike). */
export interface OtlpSpanCore {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: Record<string, unknown>;
  links: { traceId: string; spanId: string; attributes: Record<string, unknown> }[];
  resource: Record<string, unknown>;
}
