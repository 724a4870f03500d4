import type { AttributeValue } from '@opentelemetry/api';

export type Attrs = Record<string, AttributeValue>;

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
