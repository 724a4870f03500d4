import type { ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';
import { afterEach, describe, expect, it } from 'vitest';
import { loadOtelConfig } from '../../../src/otel/otel-config.js';
import { OtelMirror } from '../../../src/otel/otel-mirror.js';
import { samplerFromEnv } from '../../../src/otel/sampler.js';
import { SpanContextStage } from '../../../src/otel/span-context-stage.js';
import { inProcessDaemon } from '../../support/in-process-daemon.js';
import { waitFor } from '../../support/processes.js';
import { scriptedSession } from '../../support/scripted-session.js';

/** An exporter stalled like a hung collector: it takes each batch and answers only when released. */
class StalledExporter implements SpanExporter {
  readonly calls: { spans: ReadableSpan[]; done: (r: ExportResult) => void }[] = [];
  received = 0;
  export(spans: ReadableSpan[], done: (r: ExportResult) => void): void {
    this.received += spans.length;
    this.calls.push({ spans, done });
  }
  release(): void {
    for (const c of this.calls.splice(0)) c.done({ code: 0 });
  }
  async forceFlush(): Promise<void> {}
  async shutdown(): Promise<void> {}
}

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const QUEUE = 3;

/**
 * README, Settings: `OTEL_BSP_MAX_QUEUE_SIZE`: "past it new spans are refused and counted
 * (`sinks.otel.spans_dropped_queue_full`)", and Health: watch `sinks.otel.spans_dropped`. A tiny queue behind an
 * exporter that never answers: what /healthz reports against what the exporter was actually handed.
 */
describe('the span queue (OTEL_BSP_MAX_QUEUE_SIZE) behind a stalled exporter', () => {
  it('/healthz sinks.otel.spans_dropped_queue_full equals the spans refused, and is part of spans_dropped', async () => {
    const exporter = new StalledExporter();
    const config = loadOtelConfig('/nonexistent', {
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_BSP_MAX_QUEUE_SIZE: String(QUEUE),
      OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '1',
      OTEL_BSP_SCHEDULE_DELAY: '0',
    });
    const mirror = new OtelMirror({ config, exporter, sampler: samplerFromEnv({}), version: 'test' });
    mirror.start();
    cleanups.push(() => mirror.shutdown());
    const d = inProcessDaemon({ stamp: new SpanContextStage(mirror), consumers: [mirror] });
    cleanups.push(() => d.app.close());
    for (const e of scriptedSession().envelopes) expect((await d.app.inject({ method: 'POST', url: '/hook', payload: e })).statusCode).toBe(200);
    // the batch processor hands its first batch over and waits for it (one export at a time)
    await waitFor('the first batch at the stalled exporter', () => (exporter.calls.length > 0 ? true : undefined));

    const health = (await d.app.inject({ method: 'GET', url: '/healthz' })).json<{ sinks: { otel: Record<string, number> } }>();
    const otel = health.sinks.otel;
    expect(otel['spans_sampled_out']).toBe(0);
    expect(otel['spans_finished']).toBeGreaterThan(2 * QUEUE);
    // what was not refused is at the exporter or waiting in the bounded queue; the rest was refused, and counted
    expect(otel['spans_queued']).toBeLessThanOrEqual(QUEUE);
    const refused = otel['spans_finished']! - exporter.received - otel['spans_queued']!;
    expect(refused).toBeGreaterThan(0);
    expect(otel['spans_dropped_queue_full']).toBe(refused);
    expect(otel['spans_dropped']).toBe(otel['spans_failed']! + refused);

    // once the collector answers, everything not refused is exported: nothing unaccounted for
    const otelNow = async () => (await d.app.inject({ method: 'GET', url: '/healthz' })).json<{ sinks: { otel: Record<string, number> } }>().sinks.otel;
    await waitFor('every span not refused exported', async () => {
      exporter.release();
      const o = await otelNow();
      return o['spans_queued'] === 0 && exporter.calls.length === 0 && o['spans_exported'] === exporter.received ? true : undefined;
    });
    const after = (await d.app.inject({ method: 'GET', url: '/healthz' })).json<{ sinks: { otel: Record<string, number> } }>();
    expect(after.sinks.otel['spans_exported']! + after.sinks.otel['spans_dropped_queue_full']!).toBe(after.sinks.otel['spans_finished']);
    expect(after.sinks.otel['spans_dropped_queue_full']).toBe(refused);
  });
});
