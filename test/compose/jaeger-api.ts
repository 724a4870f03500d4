/** Jaeger's legacy query API on the stack's published port: only the fields the compose tests read. */

export const JAEGER = 'http://127.0.0.1:16686';

export interface JaegerSpan {
  spanID: string;
  operationName: string;
  references: Array<{ refType: string; spanID: string }>;
  tags: Array<{ key: string; value: unknown }>;
}
export interface JaegerTrace {
  traceID: string;
  spans: JaegerSpan[];
}

/** hermes-aep's traces in Jaeger that carry `session` in a span tag. */
export async function tracesOf(session: string): Promise<JaegerTrace[]> {
  const res = await fetch(`${JAEGER}/api/traces?service=hermes-aep&lookback=1h&limit=200`);
  if (res.status !== 200) return [];
  const body = (await res.json()) as { data: JaegerTrace[] | null };
  return (body.data ?? []).filter((t) => t.spans.some((s) => s.tags.some((tag) => String(tag.value).includes(session))));
}

/** GET /api/traces/{id}: the trace, or the HTTP status when Jaeger does not serve it. */
export async function traceById(id: string): Promise<JaegerTrace | number> {
  const res = await fetch(`${JAEGER}/api/traces/${id}`);
  if (res.status !== 200) return res.status;
  const body = (await res.json()) as { data: JaegerTrace[] | null };
  return body.data?.[0] ?? 404;
}

/** The ids of the spans a span is CHILD_OF. */
export const parentsOf = (s: JaegerSpan): string[] => s.references.filter((r) => r.refType === 'CHILD_OF').map((r) => r.spanID);

export const tagOf = (s: JaegerSpan, key: string): unknown => s.tags.find((t) => t.key === key)?.value;
