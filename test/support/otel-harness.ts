import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { OtelMirror } from '../../src/otel/otel-mirror.js';
import { loadOtelConfig } from '../../src/otel/otel-config.js';
import { samplerFromEnv } from '../../src/otel/sampler.js';
import { SpanContextStage } from '../../src/otel/span-context-stage.js';
import { inProcessDaemon } from './in-process-daemon.js';
import type { CapturePolicy } from '../../src/capture/policy.js';
import type { Envelope } from './scripted-session.js';

/** The daemon wiring in process with the mirror exporting into memory. */
export async function mirroredDaemon(opts: { env?: Record<string, string>; policy?: CapturePolicy } = {}) {
  const exporter = new InMemorySpanExporter();
  const env = { OTEL_BSP_SCHEDULE_DELAY: '0', ...opts.env };
  const config = loadOtelConfig('/nonexistent', env);
  const mirror = new OtelMirror({ config, exporter, sampler: samplerFromEnv(env), version: 'test' });
  const d = inProcessDaemon({ stamp: new SpanContextStage(mirror), consumers: [mirror], ...(opts.policy ? { policy: opts.policy } : {}) });
  const feed = async (envelopes: readonly Envelope[]) => {
    for (const e of envelopes) {
      const r = await d.app.inject({ method: 'POST', url: '/hook', payload: e });
      if (r.statusCode !== 200) throw new Error(`hook refused: ${r.body}`);
    }
    await mirror.flush();
  };
  const spans = (): ReadableSpan[] => exporter.getFinishedSpans();
  return { ...d, mirror, exporter, feed, spans };
}

/** Milliseconds since the epoch of an SDK HrTime. */
export const ms = (t: [number, number]): number => t[0] * 1000 + t[1] / 1e6;

/** A mirror with content on (redacted on both sides), as the span-shape tests run it. */
export const CONTENT_ON = {
  env: { AEP_OTEL_CAPTURE: 'redacted' },
  policy: { ceiling: 'redacted', categories: {}, redact: { home: '/home/dev' }, agent: 'hermes' },
} as const satisfies Parameters<typeof mirroredDaemon>[0];
