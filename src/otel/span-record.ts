/** The attribute values the mirror sets: OpenTelemetry's primitive values and homogeneous arrays of them (its `AnyValue` is `unknown`). */
export type AttrValue = string | number | boolean | (string | number | boolean | null)[];

export type Attrs = Record<string, AttrValue>;

/** A finished span, as plain data: what the mirror decided, before any SDK object exists. */
export interface SpanRecord {
  readonly name: string;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId?: string;
  readonly sampled: boolean;
  /** epoch milliseconds, from the AEP events' own `time` */
  readonly startMs: number;
  readonly endMs: number;
  readonly attributes: Attrs;
  readonly events: readonly { name: string; timeMs: number; attributes: Attrs }[];
  readonly droppedEvents: number;
  readonly links: readonly { traceId: string; spanId: string; sampled: boolean; attributes: Attrs }[];
  readonly status: { code: 'unset' | 'ok' | 'error'; message?: string };
}
