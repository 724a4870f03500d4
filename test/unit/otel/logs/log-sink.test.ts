import type { ExportResult } from '@opentelemetry/core';
import { InMemoryLogRecordExporter, type LogRecordExporter, type ReadableLogRecord } from '@opentelemetry/sdk-logs';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace';
import { afterEach, describe, expect, it } from 'vitest';
import { AepLogSink } from '../../../../src/otel/logs/log-sink.js';
import { parseTraceparent, toLogRecord, type BridgeEvent } from '../../../../src/otel/logs/log-record.js';
import { loadLogsConfig } from '../../../../src/otel/logs/logs-config.js';
import { loadOtelConfig } from '../../../../src/otel/otel-config.js';
import { OtelMirror } from '../../../../src/otel/otel-mirror.js';
import { samplerFromEnv } from '../../../../src/otel/sampler.js';
import { SpanContextStage } from '../../../../src/otel/span-context-stage.js';
import type { AepEvent } from '../../../../src/aep/event.js';
import type { Logger } from '../../../../src/core/logger.js';
import { inProcessDaemon } from '../../../support/in-process-daemon.js';
import { waitFor } from '../../../support/processes.js';
import { scriptedSession } from '../../../support/scripted-session.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function logSink(exporter: LogRecordExporter, env: Record<string, string> = {}, log?: Logger) {
  const config = loadLogsConfig({ OTEL_LOGS_EXPORTER: 'otlp', OTEL_BLRP_SCHEDULE_DELAY: '0', ...env });
  const sink = new AepLogSink({ config, exporter, agent: 'hermes', version: 'test', ...(log ? { log } : {}) });
  cleanups.push(() => sink.shutdown());
  return sink;
}

/** The daemon's hook path in process, the log sink on its bus (and the traces mirror's span context stage when `traces`). */
async function bridged(traces: boolean) {
  const exporter = new InMemoryLogRecordExporter();
  const sink = logSink(exporter);
  sink.start();
  const mirror = traces
    ? new OtelMirror({ config: loadOtelConfig('/nonexistent', {}), exporter: new InMemorySpanExporter(), sampler: samplerFromEnv({}), version: 'test' })
    : undefined;
  if (mirror) cleanups.push(() => mirror.shutdown());
  const d = inProcessDaemon({ ...(mirror ? { stamp: new SpanContextStage(mirror) } : {}), consumers: [...(mirror ? [mirror] : []), sink] });
  cleanups.push(() => d.app.close());
  for (const e of scriptedSession().envelopes) {
    const r = await d.app.inject({ method: 'POST', url: '/hook', payload: e });
    expect(r.statusCode).toBe(200);
  }
  await sink.flush();
  return { sink, events: d.memory.events, records: exporter.getFinishedLogRecords() };
}

const nanos = (r: ReadableLogRecord) => BigInt(r.hrTime[0]) * 1_000_000_000n + BigInt(r.hrTime[1]);

/** The record as the projection describes it: what the SDK was handed must come out unchanged. */
function expectProjected(r: ReadableLogRecord, ev: AepEvent) {
  const want = toLogRecord(ev as unknown as BridgeEvent, 'metadata');
  expect(r.eventName).toBe(want.event_name);
  expect(nanos(r)).toBe(want.time_unix_nano);
  expect([r.severityText, r.severityNumber]).toEqual([want.severity_text, want.severity_number]);
  expect(r.attributes).toStrictEqual(want.attributes);
  expect(r.body).toStrictEqual(want.body);
  expect(r.droppedAttributesCount).toBe(0);
  expect(r.resource.attributes['service.name']).toBe('hermes');
}

describe('the AEP log sink (AepLogSink) over a scripted session', () => {
  it('one record per event, in order, the projection unchanged, trace and span ids from each traceparent', async () => {
    const { sink, events, records } = await bridged(true);
    expect(events.length).toBeGreaterThan(20);
    expect(records).toHaveLength(events.length);
    const stamped = events.filter((ev) => ev.traceparent !== undefined);
    // the span context stage stamps every event that belongs to a unit: most of a session's
    expect(stamped.length).toBeGreaterThan(events.length / 2);
    events.forEach((ev, i) => {
      const r = records[i]!;
      expectProjected(r, ev);
      const trace = parseTraceparent(ev.traceparent);
      if (trace) expect(r.spanContext).toMatchObject({ traceId: trace.trace_id, spanId: trace.span_id, traceFlags: trace.flags });
      else expect(r.spanContext).toBeUndefined();
    });
    expect(sink.stats()).toMatchObject({ records_exported: events.length, records_dropped: 0, records_failed: 0, records_queued: 0 });
    expect(sink.health()).toBeUndefined();
  });

  it('without the traces mirror no event has a traceparent, and no record a trace context', async () => {
    const { events, records } = await bridged(false);
    expect(records).toHaveLength(events.length);
    expect(events.every((ev) => ev.traceparent === undefined)).toBe(true);
    expect(records.every((r) => r.spanContext === undefined)).toBe(true);
    events.forEach((ev, i) => expectProjected(records[i]!, ev));
  });
});

/** An exporter that holds every batch until told: what it answers, and when. */
class HeldExporter implements LogRecordExporter {
  readonly calls: { logs: ReadableLogRecord[]; done: (r: ExportResult) => void }[] = [];
  export(logs: ReadableLogRecord[], done: (r: ExportResult) => void): void {
    this.calls.push({ logs, done });
  }
  release(ok: boolean): void {
    for (const c of this.calls.splice(0)) c.done(ok ? { code: 0 } : { code: 1, error: Object.assign(new Error('x'), { name: 'OTLPExporterError' }) });
  }
  async forceFlush(): Promise<void> {}
  async shutdown(): Promise<void> {}
}

/** Events to write straight to a sink (the stamped events of a scripted session). */
async function someEvents(): Promise<AepEvent[]> {
  const { events } = await bridged(true);
  return events;
}

describe('bounded, and every record not delivered counted', () => {
  it('past OTEL_BLRP_MAX_QUEUE_SIZE records are refused and counted, before the SDK would drop them silently', async () => {
    const events = (await someEvents()).slice(0, 10);
    const held = new HeldExporter();
    const sink = logSink(held, { OTEL_BLRP_MAX_QUEUE_SIZE: '2' });
    sink.start();
    sink.consume(events);
    // two wait (for the SDK to load), eight refused
    expect(sink.stats()).toMatchObject({ records_dropped_queue_full: 8, records_queued: 2 });
    await waitFor('the first batch at the exporter', () => (held.calls.length === 1 ? true : undefined));
    // the exporter holds 2: the processor's buffer is empty again, so two more are taken
    sink.consume(events);
    expect(sink.stats()).toMatchObject({ records_dropped_queue_full: 16, records_queued: 2 });
    held.release(true);
    await waitFor('the second batch at the exporter', () => (held.calls.length === 1 ? true : undefined));
    held.release(true);
    await sink.flush();
    const s = sink.stats();
    expect(s).toMatchObject({ records_exported: 4, records_failed: 0, records_queued: 0, records_dropped: 16 });
    // nothing unaccounted for: every event written is exported, dropped or queued
    expect((s.records_exported as number) + (s.records_dropped as number)).toBe(2 * events.length);
  });

  it('a failing export degrades /healthz with one line at the first failure and one at recovery; the records are counted', async () => {
    const events = (await someEvents()).slice(0, 6);
    const lines: { level: string; msg: string; fields?: Record<string, unknown> }[] = [];
    const log: Logger = {
      info: (msg, fields) => lines.push({ level: 'info', msg, ...(fields ? { fields } : {}) }),
      warn: (msg, fields) => lines.push({ level: 'warn', msg, ...(fields ? { fields } : {}) }),
      error: (msg, fields) => lines.push({ level: 'error', msg, ...(fields ? { fields } : {}) }),
      debug: () => {},
      debugEnabled: false,
    };
    const held = new HeldExporter();
    const sink = logSink(held, { OTEL_BLRP_MAX_EXPORT_BATCH_SIZE: '1' }, log);
    sink.start();
    for (const ev of events.slice(0, 3)) {
      sink.consume([ev]);
      await waitFor('a batch at the exporter', () => (held.calls.length === 1 ? true : undefined));
      held.release(false);
    }
    await sink.flush();
    expect(sink.health()).toMatchObject({ sink: 'otel-logs', reason: 'otlp log export failed: OTLPExporterError' });
    expect(sink.stats()).toMatchObject({ records_failed: 3, records_dropped: 3, last_error: 'OTLPExporterError' });
    expect(lines.filter((l) => l.level === 'error')).toHaveLength(1);
    sink.consume([events[3]!]);
    await waitFor('a batch at the exporter', () => (held.calls.length === 1 ? true : undefined));
    held.release(true);
    await sink.flush();
    expect(sink.health()).toBeUndefined();
    expect(lines.filter((l) => l.level === 'info').map((l) => l.msg)).toEqual(['AEP log records are exported again']);
    expect(sink.stats()).toMatchObject({ records_exported: 1, records_failed: 3 });
    // no line quotes content: only codes and counts
    expect(JSON.stringify(lines)).not.toMatch(/PLANTEDxMARKER|dev\.aep\./);
  });

  it('after shutdown a write is counted as dropped, never thrown', async () => {
    const events = (await someEvents()).slice(0, 3);
    const sink = logSink(new InMemoryLogRecordExporter());
    await sink.shutdown();
    expect(() => sink.consume(events)).not.toThrow();
    expect(sink.stats()).toMatchObject({ records_dropped_after_shutdown: 3, records_dropped: 3 });
  });

  it('an SDK side that cannot take the record (an exporter whose import failed) fails the export, counted', async () => {
    const events = (await someEvents()).slice(0, 2);
    const { DeferredLogExporter } = await import('../../../../src/otel/logs/log-exporter.js');
    const sink = logSink(new DeferredLogExporter(() => Promise.reject(Object.assign(new Error('nope'), { code: 'ERR_MODULE_NOT_FOUND' }))));
    sink.start();
    sink.consume(events);
    await sink.flush();
    expect(sink.stats()).toMatchObject({ records_failed: 2, records_exported: 0, records_dropped: 2 });
    expect(sink.health()).toMatchObject({ reason: 'otlp log export failed: ERR_MODULE_NOT_FOUND' });
  });
});
