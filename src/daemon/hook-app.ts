import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { CapturePolicy } from '../capture/policy.js';
import type { IdentityStage } from '../identity/identity-stage.js';
import { EventBus } from '../bus/event-bus.js';
import type { Consumer, Reporting } from '../bus/consumer.js';
import type { DurableLog } from '../bus/durable-log.js';
import type { EventStage } from '../bus/event-stage.js';
import { DriftWatch } from './drift.js';
import type { EnvelopeRecorder } from './envelope-recorder.js';
import type { Logger } from '../core/logger.js';
import { HookPipeline } from './pipeline.js';
import type { PriceSource } from '../usage/price-step.js';
import { buildServer, type ServerDeps } from './server.js';
import type { Degradation } from '../core/health-latch.js';
import { WEBHOOK_PATH, type RequestGuard } from '../transport/request-guard.js';
import type { DropReports } from '../transport/drop-report.js';
import { NeverWritable, SpoolIngest } from './spool-ingest.js';
import type { ControlTarget } from '../control/control-target.js';
import type { ControlSettings } from '../control/control-types.js';
import { controlStep } from '../control/hook-step.js';
import { wireFromOwn, type WireEvent } from '../aep/wire.js';
import { errorBody, errorStatus } from '../core/errors.js';

export interface HookAppOptions {
  readonly policy: CapturePolicy;
  readonly identity: IdentityStage;
  /** the stage between identity and the bus: the OTel span context stage when the mirror is on */
  readonly stamp?: EventStage;
  /** the durable logs (the history): each hook's reply waits for their write */
  readonly durable: readonly DurableLog[];
  /**
   * the consumers that get each hook's events once the durable logs hold them, in this order
   * (spans, logs, metrics, snapshot, then the stream hub, then the relay); never for events given up
   */
  readonly consumers: readonly (Consumer & Reporting)[];
  readonly log: Logger;
  readonly maxBodyBytes: number;
  /** AEP_MAX_BODY_NODES (server.ts has the default) */
  readonly maxBodyNodes?: number;
  /** the compiled JSON worker, for tests that run from source */
  readonly jsonWorkerUrl?: URL;
  /** Host/Origin/token checks (transport/request-guard.ts); its counters go to /healthz `transport` */
  readonly guard?: RequestGuard;
  /** the plugin transport's drop reports (the caller shows them in /healthz `transport.plugin`) */
  readonly dropReports?: DropReports;
  readonly recorder?: EnvelopeRecorder;
  /** facts the caller adds to /healthz (version, epoch, …) */
  readonly health?: () => Record<string, unknown>;
  /**
   * The shim's spool (`{stateDir}/spool`), ingested before live hooks are
   * served. `seen`: spool keys whose events the replayed log already holds
   * (a previous process died between writing them and deleting the file).
   */
  readonly spool?: { readonly dir: string; readonly seen?: Set<string> };
  /** more of the server's wiring (the stream routes, once they exist: `{ stream }`) */
  readonly server?: Partial<ServerDeps>;
  /** what else cannot do its job right now (the ingest log), besides the bus's sinks */
  readonly degraded?: () => Degradation[];
  /**
   * The control target of this daemon's own sessions: attached to the
   * pipeline here (its events are stamped and written like a hook's), and,
   * while a gate is on, given the control step and the held replies.
   */
  readonly control?: { readonly target: ControlTarget; readonly settings: ControlSettings; readonly republish: (w: WireEvent) => void };
  /** prices each model call (src/usage/pricer.ts); absent: model calls carry no cost */
  readonly pricer?: PriceSource;
  /** the hook path's clock (tests inject one); absent: the system clock */
  readonly clock?: () => Date;
}

export interface HookApp {
  readonly app: FastifyInstance;
  readonly bus: EventBus;
  readonly pipeline: HookPipeline;
  readonly drift: DriftWatch;
  /** present when `spool` was given: `start()` it once listening, `close()` it first on the way down */
  readonly spool?: SpoolIngest;
}

/**
 * The hook path, wired once: stamp stage, bus (durable logs, then after-durable consumers), drift watch, pipeline, HTTP
 * server with its /healthz counters. The daemon's start-up and the in-process
 * tests build it the same way.
 */
export function createHookApp(o: HookAppOptions): HookApp {
  const bus = new EventBus();
  for (const s of o.durable) bus.addDurable(s);
  for (const c of o.consumers) bus.addAfterDurable(c);
  const drift = new DriftWatch(o.log);
  const control = o.control;
  const gated = control?.target.on ? control : undefined;
  // the spool ingest is made after the pipeline, which asks it whether a session's hooks are parked there
  const late: { spool?: SpoolIngest } = {};
  const pipeline = new HookPipeline({
    spoolHolds: (session) => late.spool?.holds(session) ?? false,
    policy: o.policy,
    identity: o.identity,
    ...(o.stamp ? { stamp: o.stamp } : {}),
    bus,
    drift,
    log: o.log,
    ...(o.clock ? { clock: o.clock } : {}),
    ...(o.pricer ? { pricer: o.pricer } : {}),
    ...(gated ? { control: (mapped, now, live) => controlStep(gated.target, gated.settings, o.policy, mapped, now, live) } : {}),
  });
  control?.target.attach({
    refusal: () => pipeline.refusal(),
    emit: (session, items, command) => pipeline.emitControl(session, items, command),
    republish: control.republish,
    // a flood's busy nacks: stamped like any ack, then to the stream and the relay only (never the history, nor
    // the OTel mirror: a flood would otherwise cost spans there)
    announce: (session, items) => {
      const events = pipeline.stampControl(session, items, false) ?? [];
      // after the events stamped before them reached the stream: a session's seqs never go back there
      if (events.length > 0) pipeline.afterPublished(() => events.forEach((e) => control.republish(wireFromOwn(e))));
      return events;
    },
  });
  const recorder = o.recorder;
  const spoolOpts = o.spool;
  const spool = spoolOpts
    ? new SpoolIngest({
        dir: spoolOpts.dir,
        maxBodyBytes: o.maxBodyBytes,
        ...(o.maxBodyNodes !== undefined ? { maxBodyNodes: o.maxBodyNodes } : {}),
        log: o.log,
        ...(spoolOpts.seen ? { seen: spoolOpts.seen } : {}),
        held: pipeline.retainedKeys,
        // one session whose history file fails: its spooled hooks wait in the spool, the others flow
        sessionRefused: (session) => bus.refusesSession(session),
        // Deleted once its events reached the OS; a refused hook (not processed) is kept for a later pass.
        // A retained one waits until the log takes it (or gives it up, counted): never ingested twice.
        ingest: async (raw, env, spooled) => {
          recorder?.record(raw, env.session_id);
          const outcome = await pipeline.handle(env, spooled);
          if (outcome.status === 'refused') throw Object.assign(new Error('the log refused the hook'), { code: `log_refused: ${outcome.reason}` });
          // a spooled hook is deleted only once its events are written: given up or lost, its file stays for a later pass
          // (moved aside when its session's file can never be written as it stands)
          if (outcome.status === 'retained' && !(await outcome.written)) throw Object.assign(new Error('the log gave the hook up'), { code: 'log_gave_up' });
          if (outcome.status === 'lost') {
            if (/not private/.test(outcome.reason)) throw new NeverWritable('its session log is not a private file of this user');
            throw Object.assign(new Error('the log lost the hook'), { code: 'log_lost' });
          }
        },
      })
    : undefined;
  if (spool) late.spool = spool;
  const app = buildServer({
    ...o.server,
    pipeline,
    ...(gated ? { control: gated.target } : {}),
    ...(recorder ? { recorder } : {}),
    maxBodyBytes: o.maxBodyBytes,
    ...(o.maxBodyNodes !== undefined ? { maxBodyNodes: o.maxBodyNodes } : {}),
    ...(o.jsonWorkerUrl ? { jsonWorkerUrl: o.jsonWorkerUrl } : {}),
    ...(o.guard ? { guard: o.guard } : {}),
    ...(o.dropReports ? { dropReports: o.dropReports } : {}),
    log: o.log,
    degraded: () => [...bus.degraded(), ...(o.degraded?.() ?? [])],
    health: () => ({
      ...o.health?.(),
      hooks: pipeline.hooks,
      hooks_failed: pipeline.failed,
      hooks_refused: pipeline.refused,
      hooks_retained: pipeline.retained,
      hooks_lost: pipeline.lost,
      held_spool_keys: pipeline.retainedKeys.size,
      ...(o.stamp?.errors ? { stamp_errors: o.stamp.errors } : {}),
      sessions_active: o.identity.activeSessions,
      identity: o.identity.counters,
      drift: drift.stats(),
      sinks: bus.stats(),
      ...(recorder ? { recorder: { recorded: recorder.recorded, dropped: recorder.dropped } } : {}),
      ...(spool ? { spool: spool.stats() } : {}),
      ...(control ? { control_target: control.target.stats() } : {}),
    }),
  });
  if (spool) {
    const isWebhook = (req: FastifyRequest) => req.method === 'POST' && req.routeOptions.url === WEBHOOK_PATH;
    // a webhook delivery waits behind the spool like a hook (Hermes retries its 503 once, 1 s later): counted
    const webhookStats = o.server?.webhook?.stats;
    const isHook = (req: FastifyRequest) => (req.method === 'POST' && req.routeOptions.url === '/hook') || isWebhook(req);
    const refuseDraining = (req: FastifyRequest) => {
      if (webhookStats && isWebhook(req)) webhookStats.unavailable++;
    };
    // While the spool drains at start (and once closing), or its drain is stalled (the log refused a
    // spooled hook, or a live hook's held events are awaited), hooks are refused before their body is
    // read: the shim spools them behind the others, so arrival order holds and none waits on the drain.
    app.addHook('onRequest', (req, reply, done) => {
      if (!(spool.draining || spool.stalled) || !isHook(req)) return done();
      refuseDraining(req);
      void reply.code(errorStatus('spool-draining')).header('retry-after', '1').send(errorBody('spool-draining'));
    });
    // Live: anything spooled since is ingested before this hook (callback style: no promise when nothing waits);
    // if that drain stalls meanwhile, the hook is refused like one that found it stalled (never left to time out).
    app.addHook('preHandler', (req, reply, done) => {
      const wait = isHook(req) ? spool.beforeLive() : undefined;
      if (!wait) return done();
      wait.then((how) => {
        if (how === 'drained') return done();
        refuseDraining(req);
        void reply.code(errorStatus('spool-draining')).header('retry-after', '1').send(errorBody('spool-draining'));
      }, done);
    });
  }
  return { app, bus, pipeline, drift, ...(spool ? { spool } : {}) };
}
