import type { FastifyInstance } from 'fastify';
import type { CapturePolicy } from '../capture/policy.js';
import type { IdentityStage } from '../identity/identity-stage.js';
import { EventBus } from '../sinks/event-bus.js';
import type { EventSink } from '../sinks/sink.js';
import { DriftWatch } from './drift.js';
import type { EnvelopeRecorder } from './envelope-recorder.js';
import type { Logger } from './log.js';
import { HookPipeline } from './pipeline.js';
import { buildServer } from './server.js';
import type { RequestGuard } from '../transport/request-guard.js';

export interface HookAppOptions {
  readonly policy: CapturePolicy;
  readonly identity: IdentityStage;
  /** in bus order: the OTel mirror first, since it stamps what later sinks serialize */
  readonly sinks: readonly EventSink[];
  readonly log: Logger;
  readonly maxBodyBytes: number;
  /** AEP_MAX_BODY_NODES (server.ts has the default) */
  readonly maxBodyNodes?: number;
  /** the compiled JSON worker, for tests that run from source */
  readonly jsonWorkerUrl?: URL;
  /** Host/Origin/token checks (transport/request-guard.ts); its counters go to /healthz `transport` */
  readonly guard?: RequestGuard;
  readonly recorder?: EnvelopeRecorder;
  /** facts the caller adds to /healthz (version, epoch, …) */
  readonly health?: () => Record<string, unknown>;
}

export interface HookApp {
  readonly app: FastifyInstance;
  readonly bus: EventBus;
  readonly pipeline: HookPipeline;
  readonly drift: DriftWatch;
}

/**
 * The hook path, wired once: bus and sinks, drift watch, pipeline, HTTP
 * server with its /healthz counters. The daemon's start-up and the in-process
 * tests build it the same way.
 */
export function createHookApp(o: HookAppOptions): HookApp {
  const bus = new EventBus();
  for (const s of o.sinks) bus.add(s);
  const drift = new DriftWatch(o.log);
  const pipeline = new HookPipeline(o.policy, o.identity, bus, drift, undefined, o.log);
  const recorder = o.recorder;
  const app = buildServer({
    pipeline,
    ...(recorder ? { recorder } : {}),
    maxBodyBytes: o.maxBodyBytes,
    ...(o.maxBodyNodes !== undefined ? { maxBodyNodes: o.maxBodyNodes } : {}),
    ...(o.jsonWorkerUrl ? { jsonWorkerUrl: o.jsonWorkerUrl } : {}),
    ...(o.guard ? { guard: o.guard } : {}),
    log: o.log,
    degraded: () => bus.degraded(),
    health: () => ({
      ...o.health?.(),
      hooks: pipeline.hooks,
      hooks_failed: pipeline.failed,
      hooks_refused: pipeline.refused,
      hooks_retained: pipeline.retained,
      hooks_lost: pipeline.lost,
      sessions_active: o.identity.activeSessions,
      identity: o.identity.counters,
      drift: drift.stats(),
      sinks: bus.stats(),
      ...(recorder ? { recorder: { recorded: recorder.recorded, dropped: recorder.dropped } } : {}),
    }),
  });
  return { app, bus, pipeline, drift };
}
