import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { vi } from 'vitest';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { OtelMirror } from '../../src/otel/otel-mirror.js';
import { loadOtelConfig } from '../../src/otel/otel-config.js';
import { samplerFromEnv } from '../../src/otel/sampler.js';
import { SpanContextStage } from '../../src/otel/span-context-stage.js';
import type { AepEvent } from '../../src/aep/event.js';
import { defaultPolicy } from '../../src/capture/policy.js';
import { createHookApp } from '../../src/daemon/hook-app.js';
import { silentLogger } from '../../src/core/logger.js';
import { IdentityStage } from '../../src/identity/identity-stage.js';
import { JsonlHistorySink } from '../../src/history/jsonl-history-sink.js';
import type { Consumer, Reporting } from '../../src/bus/consumer.js';
import { readSnapshot, snapshotPath } from '../../src/state/snapshot-file.js';
import { Snapshotter } from '../../src/state/snapshot.js';
import { JSON_WORKER } from './paths.js';

/**
 * Raw hook bodies played through the daemon's wiring with a fixed clock and
 * fixed ids (the golden history's conditions): identity, the span context
 * stage, then the bus: the history as its durable log, the others as
 * after-durable consumers in the order asked for (the history's place in
 * `order` says nothing: it always comes first).
 */
export type SinkName = 'mirror' | 'history' | 'memory' | 'snapshot';

export interface HistoryRun {
  /** every file of the log dir (relative path → bytes), plus `spans.jsonl`: the exported spans, one canonical line each */
  readonly files: Map<string, string>;
  /** with the `memory` sink: each event as that sink serialized it the moment it was handed over */
  readonly memory?: readonly string[];
  /** with the `memory` sink: events it was handed that were not frozen */
  readonly unfrozen?: number;
  /** with the `snapshot` sink: its final save's log offsets (log file name → offset) and span state */
  readonly snapshot?: { readonly offsets: Record<string, number>; readonly mirror: string | null };
}

const T0 = Date.parse('2026-11-29T19:00:00Z');

/** Every file below `dir`, as relative path → bytes. */
export function tree(dir: string): Map<string, string> {
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
export function spanLines(spans: readonly ReadableSpan[]): string {
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

/** A consumer that serializes what it is handed at once: it would see an event that a later one changed unchanged. */
class SerializingSink implements Consumer, Reporting {
  readonly name = 'memory';
  readonly lines: string[] = [];
  unfrozen = 0;
  consume(events: readonly AepEvent[]): void {
    for (const ev of events) {
      if (!Object.isFrozen(ev)) this.unfrozen++;
      this.lines.push(JSON.stringify(ev));
    }
  }
  async flush(): Promise<void> {}
  async shutdown(): Promise<void> {}
  stats() {
    return { events: this.lines.length };
  }
}

/** Play `hooks` (raw JSON bodies, one second apart) with the sinks on the bus in `order`. */
export async function playHistory(hooks: readonly string[], order: readonly SinkName[]): Promise<HistoryRun> {
  const root = mkdtempSync(path.join(os.tmpdir(), 'hermes-aep-history-run-'));
  const historyDir = path.join(root, 'log');
  const stateDir = path.join(root, 'state');
  try {
    vi.useFakeTimers({ toFake: ['Date'] });
    let t = T0;
    vi.setSystemTime(t);
    let n = 0;
    const policy = defaultPolicy({ home: '/home/user' });
    const identity = new IdentityStage({ epoch: 1, host: 'golden-host', policy, newId: () => `01J${String(++n).padStart(23, '0')}` });
    const env = { OTEL_BSP_SCHEDULE_DELAY: '0' };
    const exporter = new InMemorySpanExporter();
    const mirror = new OtelMirror({ config: loadOtelConfig(historyDir, env), exporter, sampler: samplerFromEnv(env), version: 'golden', now: () => t });
    const history = new JsonlHistorySink(historyDir, 100_000, { fsyncIntervalMs: 0 });
    await history.start();
    const memory = new SerializingSink();
    const snapshot = order.includes('snapshot')
      ? new Snapshotter({
          stateDir,
          historyDir,
          // the clock is fixed in 2026, the logs' mtimes are real: a window that keeps them all
          windowMs: 100 * 365 * 86_400_000,
          intervalMs: 0,
          daemonVersion: 'test',
          identity,
          mirror,
          drained: () => history.flush(),
          log: silentLogger,
        })
      : undefined;
    mkdirSync(stateDir, { recursive: true, mode: 0o700 });
    snapshot?.restore();
    const byName: Record<Exclude<SinkName, 'history'>, (Consumer & Reporting) | undefined> = { mirror, memory, snapshot };
    const { app } = createHookApp({
      policy,
      identity,
      stamp: new SpanContextStage(mirror),
      durable: [history],
      consumers: order.flatMap((s) => (s === 'history' ? [] : [byName[s]!])),
      log: silentLogger,
      maxBodyBytes: 64 * 1024 * 1024,
      jsonWorkerUrl: JSON_WORKER,
    });
    for (const body of hooks) {
      vi.setSystemTime((t += 1000));
      const r = await app.inject({ method: 'POST', url: '/hook', headers: { 'content-type': 'application/json' }, payload: body });
      if (r.statusCode !== 200) throw new Error(`hook refused: ${r.statusCode} ${r.body}`);
    }
    await mirror.flush();
    await history.flush();
    let saved: HistoryRun['snapshot'];
    if (snapshot) {
      if (!(await snapshot.save('shutdown'))) throw new Error('the snapshot was not saved');
      const snap = readSnapshot(snapshotPath(stateDir));
      if (!snap) throw new Error('the snapshot does not read back');
      saved = {
        offsets: Object.fromEntries([...snap.cursors].map(([file, c]) => [file, c.offset]).sort(([a], [b]) => String(a).localeCompare(String(b)))),
        mirror: snap.mirror?.toString('utf8') ?? null,
      };
    }
    const files = tree(historyDir);
    files.set('spans.jsonl', spanLines(exporter.getFinishedSpans()));
    await app.close();
    await mirror.shutdown();
    await history.shutdown();
    return {
      files,
      ...(order.includes('memory') ? { memory: memory.lines, unfrozen: memory.unfrozen } : {}),
      ...(saved ? { snapshot: saved } : {}),
    };
  } finally {
    vi.useRealTimers();
    rmSync(root, { recursive: true, force: true });
  }
}
