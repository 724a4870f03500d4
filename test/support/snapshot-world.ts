import type { DurableLog } from '../../src/bus/durable-log.js';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace';
import path from 'node:path';
import type { AepEvent } from '../../src/aep/event.js';
import { defaultPolicy } from '../../src/capture/policy.js';
import { DriftWatch } from '../../src/daemon/drift.js';
import { silentLogger } from '../../src/core/logger.js';
import { HookPipeline } from '../../src/daemon/pipeline.js';
import type { HookEnvelope } from '../../src/hermes/envelope.js';
import { EndedSessions } from '../../src/identity/ended-sessions.js';
import { IdentityStage } from '../../src/identity/identity-stage.js';
import { EventBus } from '../../src/bus/event-bus.js';
import { JsonlHistorySink } from '../../src/history/jsonl-history-sink.js';
import { Snapshotter, type RestoreReport } from '../../src/state/snapshot.js';
import { loadOtelConfig } from '../../src/otel/otel-config.js';
import { OtelMirror } from '../../src/otel/otel-mirror.js';
import { SpanContextStage } from '../../src/otel/span-context-stage.js';
import type { Envelope } from './scripted-session.js';

/**
 * The daemon's state machinery in process, on real log and state dirs, with
 * a clock and ids the test controls: two worlds fed the same hooks in the
 * same order emit byte-identical events and spans when their state is equal.
 */
export interface World {
  readonly identity: IdentityStage;
  readonly mirror: OtelMirror | undefined;
  readonly snapshot: Snapshotter;
  readonly restored: RestoreReport;
  /** every event the hooks fed so far became, in order */
  readonly events: AepEvent[];
  /** feed hooks one by one at `at(i)` */
  feed(envs: readonly Envelope[], at: (i: number) => number): void;
  /** the spans exported so far (after a flush) */
  spans(): Promise<ReadableSpan[]>;
  /** wait until the log holds every event */
  drain(): Promise<void>;
  /** the graceful stop: flush, close the log, write the final snapshot */
  close(): Promise<void>;
  /** the crash: what reached the log stays; no final snapshot */
  crash(): Promise<void>;
}

export interface WorldOptions {
  readonly root: string;
  readonly epoch: number;
  /** ids are `${idPrefix}${counter}`: deterministic */
  readonly idPrefix: string;
  /** the mirror's clock (idle sweeps) */
  readonly now: () => number;
  readonly windowMs?: number;
  readonly maxSessions?: number;
  /** the OTel mirror on (default) or off */
  readonly mirror?: boolean;
}

export async function openWorld(o: WorldOptions): Promise<World> {
  const historyDir = path.join(o.root, 'log');
  const stateDir = path.join(o.root, 'state');
  const policy = defaultPolicy({ home: '/home/dev' });
  const ended = new EndedSessions(stateDir);
  await ended.load();
  let n = 0;
  const identity = new IdentityStage({
    ended,
    epoch: o.epoch,
    host: 'test-host',
    policy,
    newId: () => `${o.idPrefix}${String(++n).padStart(9, '0')}`,
    maxSessions: o.maxSessions ?? 10_000,
  });
  const exporter = new InMemorySpanExporter();
  const config = loadOtelConfig(historyDir, {
    OTEL_BSP_SCHEDULE_DELAY: '600000',
    OTEL_BSP_MAX_QUEUE_SIZE: '1000000',
    OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '1000000',
  });
  const mirror = o.mirror === false ? undefined : new OtelMirror({ config, exporter, sampler: () => true, version: 'test', now: o.now });
  const log = new JsonlHistorySink(historyDir, 1_000_000);
  const snapshot = new Snapshotter({
    stateDir,
    historyDir,
    windowMs: o.windowMs ?? 3_600_000,
    intervalMs: 0,
    daemonVersion: 'test',
    identity,
    ...(mirror ? { mirror } : {}),
    drained: () => log.flush(),
    inFlight: () => bus.inFlight(),
    log: silentLogger,
  });
  const restored = snapshot.restore();
  mirror?.start();
  const bus = new EventBus();
  const events: AepEvent[] = [];
  // what the pipeline emits, in order (its reply promise settles later; the events are published at once): a
  // durable log in memory, written at once
  const collect: DurableLog = {
    name: 'collect',
    write: (evs) => (events.push(...evs), Promise.resolve({ written: evs.length, retained: 0, lost: 0 })),
    flush: async () => undefined,
    shutdown: async () => undefined,
    stats: () => ({}),
  };
  bus.addDurable(log);
  bus.addDurable(collect);
  for (const c of [...(mirror ? [mirror] : []), snapshot]) bus.addAfterDurable(c);
  let clock = 0;
  const pipeline = new HookPipeline({
    policy,
    identity,
    ...(mirror ? { stamp: new SpanContextStage(mirror) } : {}),
    bus,
    drift: new DriftWatch(silentLogger),
    clock: () => new Date(clock),
    log: silentLogger,
  });
  // the hooks fed and not yet settled: the spans they finish leave once their write settled (the bus's after-durable list)
  const handled: Promise<unknown>[] = [];
  const settled = async () => {
    while (handled.length > 0) await Promise.all(handled.splice(0));
  };
  return {
    identity,
    mirror,
    snapshot,
    restored,
    events,
    feed(envs, at) {
      envs.forEach((e, i) => {
        clock = at(i);
        handled.push(pipeline.handle(e as unknown as HookEnvelope));
      });
    },
    async spans() {
      await settled();
      await mirror?.flush();
      return exporter.getFinishedSpans();
    },
    drain: () => log.flush(),
    async close() {
      await settled();
      await bus.shutdown();
      await snapshot.close();
      await ended.flush();
    },
    async crash() {
      await log.flush();
      await settled();
      await bus.shutdown();
      await ended.flush();
    },
  };
}

/** A span as plain JSON, every field the exporter sends. */
export function spanJson(s: ReadableSpan): string {
  const c = s.spanContext();
  return JSON.stringify({
    name: s.name,
    trace: c.traceId,
    span: c.spanId,
    parent: s.parentSpanContext?.spanId,
    start: s.startTime,
    end: s.endTime,
    status: s.status,
    attributes: s.attributes,
    events: s.events,
    links: s.links.map((l) => ({ trace: l.context.traceId, span: l.context.spanId, attributes: l.attributes })),
    dropped: s.droppedEventsCount,
  });
}
