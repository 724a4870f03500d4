import { monotonicFactory } from 'ulid';
import { defaultPolicy, type CapturePolicy } from '../../src/capture/policy.js';
import { silentLogger, type Logger } from '../../src/core/logger.js';
import { IdentityStage } from '../../src/identity/identity-stage.js';
import { createHookApp } from '../../src/daemon/hook-app.js';
import type { AepEvent } from '../../src/aep/event.js';
import type { EventSink } from '../../src/sinks/sink.js';
import type { EventStage } from '../../src/daemon/pipeline.js';
import type { RequestGuard } from '../../src/transport/request-guard.js';
import { JSON_WORKER } from './paths.js';
import { ControlTarget } from '../../src/control/control-target.js';
import type { ControlSettings } from '../../src/control/control-types.js';
import type { WireEvent } from '../../src/aep/wire.js';

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
export function inProcessDaemon(
  opts: {
    policy?: CapturePolicy;
    log?: Logger;
    stamp?: EventStage;
    sinks?: EventSink[];
    maxBodyBytes?: number;
    maxBodyNodes?: number;
    guard?: RequestGuard;
    /** a control target with these gates (its held replies, its commands), as the daemon wires it */
    control?: ControlSettings;
    /** the control target's hold cap, when a test wants a small one */
    maxHeld?: number;
    /** the control target's clock (ms since the epoch) */
    controlClock?: () => number;
    /** hears what the control target publishes to the stream only (a recorded ack again, a flood's nack) */
    republish?: (w: WireEvent) => void;
    /** hears each hook's (and control target's) events once their durable write settled, as the stream hub does */
    settled?: (events: readonly AepEvent[]) => void;
  } = {},
) {
  const policy = opts.policy ?? defaultPolicy({ home: '/home/dev' });
  const ulid = monotonicFactory();
  const identity = new IdentityStage({ epoch: 3, host: 'test-host', policy, newId: () => ulid() });
  const memory = new MemorySink();
  const log = opts.log ?? silentLogger;
  const control = opts.control
    ? new ControlTarget({
        settings: opts.control,
        policy,
        log,
        ...(opts.maxHeld !== undefined ? { maxHeld: opts.maxHeld } : {}),
        ...(opts.controlClock ? { clock: opts.controlClock } : {}),
      })
    : undefined;
  const { app, bus, pipeline, drift } = createHookApp({
    policy,
    identity,
    ...(opts.stamp ? { stamp: opts.stamp } : {}),
    // the memory sink first: the events are frozen and stamped before the bus, so it sees what every sink sees
    sinks: [memory, ...(opts.sinks ?? [])],
    log,
    ...(opts.settled ? { settled: opts.settled } : {}),
    ...(control && opts.control ? { control: { target: control, settings: opts.control, republish: opts.republish ?? (() => undefined) } } : {}),
    maxBodyBytes: opts.maxBodyBytes ?? 64 * 1024 * 1024,
    ...(opts.maxBodyNodes !== undefined ? { maxBodyNodes: opts.maxBodyNodes } : {}),
    ...(opts.guard ? { guard: opts.guard } : {}),
    jsonWorkerUrl: JSON_WORKER,
  });
  return { app, memory, identity, drift, bus, pipeline, ...(control ? { control } : {}) };
}
