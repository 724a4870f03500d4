import { afterEach, describe, expect, it, vi } from 'vitest';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { OtelMirror } from '../../exporters/otel/otel-mirror.js';
import { loadOtelConfig } from '../../exporters/otel/otel-config.js';
import { samplerFromEnv } from '../../exporters/otel/sampler.js';
import { SpanContextStage } from '../../exporters/otel/span-context-stage.js';
import { defaultPolicy } from '../../src/capture/policy.js';
import { createHookApp } from '../../src/daemon/hook-app.js';
import { silentLogger } from '../../src/daemon/log.js';
import { IdentityStage } from '../../src/identity/identity-stage.js';
import { JsonlLogSink } from '../../src/sinks/jsonl-log-sink.js';
import { JSON_WORKER, ROOT } from '../support/paths.js';

/**
 * The history and the spans the daemon makes of the envelopes the REAL Hermes
 * sent (fixtures/hermes-recorded*), byte for byte, against what the daemon
 * made of them before the core refactor (fixtures/golden-history, recorded
 * from main at 938bdb1 with GOLDEN_UPDATE=1). Clock and ids are fixed; the
 * wiring is the daemon's: the span context stage, then the OTel mirror and
 * the JSONL history on one bus.
 */
const SETS = [
  { version: '0.18.2', dir: path.join(ROOT, 'fixtures', 'hermes-recorded', 'raw') },
  { version: '0.19.0', dir: path.join(ROOT, 'fixtures', 'hermes-recorded-0.19.0', 'raw') },
] as const;
const GOLDEN = path.join(ROOT, 'fixtures', 'golden-history');
const UPDATE = process.env.GOLDEN_UPDATE === '1';
const T0 = Date.parse('2026-11-29T19:00:00Z');

afterEach(() => {
  vi.useRealTimers();
});

/** Every file below `dir`, as relative path → bytes. */
function tree(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.set(path.relative(dir, p), readFileSync(p, 'utf8'));
    }
  };
  walk(dir);
  return out;
}

const hex = (n: number) => n.toString(16);
const hr = (t: [number, number]) => `${t[0]}.${String(t[1]).padStart(9, '0')}`;

/** One line per span, sorted: what a collector receives, minus the SDK's resource. */
function spanLines(spans: readonly ReadableSpan[]): string {
  const lines = spans.map((s) => {
    const ctx = s.spanContext();
    const parent = (s as unknown as { parentSpanContext?: { spanId: string } }).parentSpanContext?.spanId;
    return JSON.stringify({
      trace: ctx.traceId,
      span: ctx.spanId,
      parent: parent ?? null,
      flags: hex(ctx.traceFlags),
      name: s.name,
      kind: s.kind,
      start: hr(s.startTime),
      end: hr(s.endTime),
      status: s.status,
      attributes: Object.fromEntries(Object.entries(s.attributes).sort(([a], [b]) => a.localeCompare(b))),
      events: s.events.map((e) => ({ name: e.name, time: hr(e.time), attributes: e.attributes ?? {} })),
      links: s.links.map((l) => ({ trace: l.context.traceId, span: l.context.spanId, attributes: l.attributes ?? {} })),
    });
  });
  return lines.sort().join('\n') + '\n';
}

async function play(file: string): Promise<Map<string, string>> {
  const logDir = mkdtempSync(path.join(os.tmpdir(), 'hermes-aep-golden-'));
  try {
    vi.useFakeTimers({ toFake: ['Date'] });
    let t = T0;
    vi.setSystemTime(t);
    let n = 0;
    const policy = defaultPolicy({ home: '/home/user' });
    const identity = new IdentityStage({ epoch: 1, host: 'golden-host', policy, newId: () => `01J${String(++n).padStart(23, '0')}` });
    const env = { OTEL_BSP_SCHEDULE_DELAY: '0' };
    const exporter = new InMemorySpanExporter();
    const mirror = new OtelMirror({ config: loadOtelConfig(logDir, env), exporter, sampler: samplerFromEnv(env), version: 'golden', now: () => t });
    const history = new JsonlLogSink(logDir, 100_000, { fsyncIntervalMs: 0 });
    await history.start();
    const { app } = createHookApp({
      policy,
      identity,
      stamp: new SpanContextStage(mirror),
      sinks: [mirror, history],
      log: silentLogger,
      maxBodyBytes: 64 * 1024 * 1024,
      jsonWorkerUrl: JSON_WORKER,
    });
    for (const line of readFileSync(file, 'utf8').split('\n').filter(Boolean)) {
      vi.setSystemTime((t += 1000));
      const r = await app.inject({ method: 'POST', url: '/hook', headers: { 'content-type': 'application/json' }, payload: line });
      expect(r.statusCode, r.body).toBe(200);
    }
    await mirror.flush();
    await history.flush();
    const out = tree(logDir);
    out.set('spans.jsonl', spanLines(exporter.getFinishedSpans()));
    await app.close();
    await mirror.shutdown();
    await history.shutdown();
    return out;
  } finally {
    rmSync(logDir, { recursive: true, force: true });
  }
}

describe.each(SETS)('golden history, recorded Hermes $version', ({ version, dir }) => {
  const scenarios = readdirSync(dir)
    .filter((f) => f.endsWith('.jsonl'))
    .sort();

  it.each(scenarios)('%s: history and spans byte-identical to the recorded run', async (scenario) => {
    const got = await play(path.join(dir, scenario));
    const where = path.join(GOLDEN, version, scenario.replace(/\.jsonl$/, ''));
    if (UPDATE) {
      rmSync(where, { recursive: true, force: true });
      for (const [rel, bytes] of got) {
        mkdirSync(path.dirname(path.join(where, rel)), { recursive: true });
        writeFileSync(path.join(where, rel), bytes);
      }
    }
    const want = tree(where);
    expect([...got.keys()]).toEqual([...want.keys()]);
    for (const [rel, bytes] of want) expect(got.get(rel), rel).toBe(bytes);
    // the history is not empty: a refactor that wrote nothing cannot pass
    expect([...want.keys()].some((k) => k.endsWith('.jsonl') && k !== 'spans.jsonl')).toBe(true);
  });
});
