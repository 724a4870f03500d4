import { monotonicFactory } from 'ulid';
import { defaultPolicy, type CapturePolicy } from '../../src/capture/policy.js';
import { DriftWatch } from '../../src/daemon/drift.js';
import { silentLogger, type Logger } from '../../src/daemon/log.js';
import { HookPipeline } from '../../src/daemon/pipeline.js';
import { buildServer } from '../../src/daemon/server.js';
import { IdentityStage } from '../../src/identity/identity-stage.js';
import { EventBus } from '../../src/sinks/event-bus.js';
import type { AepEvent } from '../../src/aep/event.js';
import type { EventSink } from '../../src/sinks/sink.js';

/** A sink that keeps what it is given: a real, small implementation for tests. */
export class MemorySink implements EventSink {
  readonly name = 'memory';
  readonly events: AepEvent[] = [];
  write(events: readonly AepEvent[]): void {
    this.events.push(...events);
  }
  async flush(): Promise<void> {}
  async shutdown(): Promise<void> {}
  stats() {
    return { events: this.events.length };
  }
}

/** The daemon's wiring, in process, for fastify `inject` tests. */
export function inProcessDaemon(opts: { policy?: CapturePolicy; log?: Logger; sinks?: EventSink[]; maxBodyBytes?: number } = {}) {
  const policy = opts.policy ?? defaultPolicy({ home: '/home/dev' });
  const ulid = monotonicFactory();
  const identity = new IdentityStage({ epoch: 3, host: 'test-host', policy, newId: () => ulid() });
  const bus = new EventBus();
  const memory = new MemorySink();
  bus.add(memory);
  for (const s of opts.sinks ?? []) bus.add(s);
  const drift = new DriftWatch(opts.log ?? silentLogger);
  const pipeline = new HookPipeline(policy, identity, bus, drift);
  const app = buildServer({
    pipeline,
    maxBodyBytes: opts.maxBodyBytes ?? 64 * 1024 * 1024,
    log: opts.log ?? silentLogger,
    health: () => ({ hooks: pipeline.hooks, drift: drift.stats(), identity: identity.counters, sinks: bus.stats() }),
  });
  return { app, memory, identity, drift, bus, pipeline };
}
