import type { WebhookDeps } from '../../src/daemon/webhook-route.js';
import { monotonicFactory } from 'ulid';
import { defaultPolicy, type CapturePolicy } from '../../src/capture/policy.js';
import { silentLogger, type Logger } from '../../src/core/logger.js';
import { IdentityStage } from '../../src/identity/identity-stage.js';
import { createHookApp } from '../../src/daemon/hook-app.js';
import type { AepEvent } from '../../src/aep/event.js';
import type { Consumer, Reporting } from '../../src/bus/consumer.js';
import type { DurableLog, WriteOutcome } from '../../src/bus/durable-log.js';
import type { EventStage } from '../../src/bus/event-stage.js';
import type { RequestGuard } from '../../src/transport/request-guard.js';
import { JSON_WORKER } from './paths.js';
import { ControlTarget } from '../../src/control/control-target.js';
import type { ControlSettings } from '../../src/control/control-types.js';
import type { WireEvent } from '../../src/aep/wire.js';
import type { PriceSource } from '../../src/usage/price-step.js';

/**
 * A durable log that keeps what it is given, in memory, and reports it written at once: a real, small
 * implementation for tests. It sees each batch when it is published, as the history does.
 */
export class MemoryLog implements DurableLog {
  readonly name = 'memory';
  readonly events: AepEvent[] = [];
  write(events: readonly AepEvent[]): Promise<WriteOutcome> {
    this.events.push(...events);
    return Promise.resolve({ written: events.length, retained: 0, lost: 0 });
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
    /** durable logs after the memory log (a history, a log whose writes a test settles) */
    durable?: DurableLog[];
    /** after-durable consumers, in order (the mirror, the log bridge, the metrics; a stream stand-in) */
    consumers?: (Consumer & Reporting)[];
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
    /** POST /webhook's parts (its secret, window, ledger, counters), as the daemon wires them with TCP on */
    webhook?: WebhookDeps;
    /** prices each model call, as the daemon's pricing step does (absent: model calls carry no cost) */
    pricer?: PriceSource;
    /** the hook path's clock (each hook's time, a session's last word); absent: the system clock */
    clock?: () => Date;
  } = {},
) {
  const policy = opts.policy ?? defaultPolicy({ home: '/home/dev' });
  const ulid = monotonicFactory();
  const identity = new IdentityStage({ epoch: 3, host: 'test-host', policy, newId: () => ulid() });
  const memory = new MemoryLog();
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
    // the memory log first: the events are frozen and stamped before the bus, so it sees what the history would write
    durable: [memory, ...(opts.durable ?? [])],
    consumers: opts.consumers ?? [],
    log,
    ...(control && opts.control ? { control: { target: control, settings: opts.control, republish: opts.republish ?? (() => undefined) } } : {}),
    maxBodyBytes: opts.maxBodyBytes ?? 64 * 1024 * 1024,
    ...(opts.maxBodyNodes !== undefined ? { maxBodyNodes: opts.maxBodyNodes } : {}),
    ...(opts.guard ? { guard: opts.guard } : {}),
    ...(opts.webhook ? { server: { webhook: opts.webhook } } : {}),
    ...(opts.pricer ? { pricer: opts.pricer } : {}),
    ...(opts.clock ? { clock: opts.clock } : {}),
    jsonWorkerUrl: JSON_WORKER,
  });
  return { app, memory, identity, drift, bus, pipeline, ...(control ? { control } : {}) };
}
