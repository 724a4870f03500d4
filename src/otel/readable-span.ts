import { SpanKind, SpanStatusCode, TraceFlags, type HrTime, type SpanContext } from '@opentelemetry/api';
import type { InstrumentationScope } from '@opentelemetry/core';
import type { Resource } from '@opentelemetry/resources';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import type { SpanRecord } from './span-record.js';

function hr(ms: number): HrTime {
  const whole = Math.floor(ms);
  return [Math.floor(whole / 1000), (whole % 1000) * 1_000_000 + Math.round((ms - whole) * 1_000_000)];
}

function ctx(traceId: string, spanId: string, sampled: boolean): SpanContext {
  return { traceId, spanId, traceFlags: sampled ? TraceFlags.SAMPLED : TraceFlags.NONE, isRemote: false };
}

const STATUS = { unset: SpanStatusCode.UNSET, ok: SpanStatusCode.OK, error: SpanStatusCode.ERROR } as const;

/**
 * A finished span record as the SDK's processors and exporters take it. The
 * span is built after the fact from AEP event times, so it is handed to the
 * SDK already ended; ids and times are the mirror's, not the SDK's.
 */
export function toReadableSpan(r: SpanRecord, resource: Resource, scope: InstrumentationScope): ReadableSpan {
  const context = ctx(r.traceId, r.spanId, r.sampled);
  return {
    name: r.name,
    kind: SpanKind.INTERNAL,
    spanContext: () => context,
    ...(r.parentSpanId ? { parentSpanContext: ctx(r.traceId, r.parentSpanId, r.sampled) } : {}),
    startTime: hr(r.startMs),
    endTime: hr(r.endMs),
    duration: hr(r.endMs - r.startMs),
    status: r.status.message ? { code: STATUS[r.status.code], message: r.status.message } : { code: STATUS[r.status.code] },
    attributes: r.attributes,
    links: r.links.map((l) => ({ context: ctx(l.traceId, l.spanId, l.sampled), attributes: l.attributes })),
    events: r.events.map((e) => ({ name: e.name, time: hr(e.timeMs), attributes: e.attributes })),
    ended: true,
    resource,
    instrumentationScope: scope,
    droppedAttributesCount: 0,
    droppedEventsCount: r.droppedEvents,
    droppedLinksCount: 0,
  };
}
