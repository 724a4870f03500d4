import Fastify, { errorCodes, LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyRequest } from 'fastify';
import { hookEnvelopeSchema } from '../hermes/envelope.js';
import type { HookPipeline } from './pipeline.js';
import { pinoOf, type Logger } from '../core/logger.js';
import type { EnvelopeRecorder } from './envelope-recorder.js';
import type { Degradation } from '../core/health-latch.js';
import { JsonBodyParser, knownDepth } from '../transport/json-body.js';
import { DEFAULT_MAX_BODY_NODES } from '../config/config.js';
import type { RequestGuard } from '../transport/request-guard.js';
import { DROPPED_HEADER, type DropReports } from '../transport/drop-report.js';
import { readSpoolKey, SPOOL_KEY_HEADER } from '../transport/spool-key.js';
import { streamRoutes, type StreamHttpDeps } from '../stream/http/stream-routes.js';
import { MAX_DEPTH } from '../core/limits.js';
import { errorBody, errorStatus, type HttpErrorCode } from '../core/errors.js';
import type { ControlTarget } from '../control/control-target.js';
import { liveHookOf } from '../control/hook-step.js';
import { EMPTY_REPLY, type HookReply } from '../control/control-types.js';
import type { HookOutcome } from './pipeline.js';
import type { FastifyReply } from 'fastify';
import { webhookRoute, type WebhookDeps } from './webhook-route.js';
import { uiRoutes } from '../ui-server/ui-routes.js';
import type { UiDeps } from '../ui-server/deps.js';

export interface ServerDeps {
  readonly pipeline: HookPipeline;
  /** the opt-in raw-envelope recorder (AEP_RECORD_DIR) */
  readonly recorder?: EnvelopeRecorder;
  readonly health: () => Record<string, unknown>;
  /** what cannot do its job right now: non-empty turns /healthz `degraded` (HTTP 503) */
  readonly degraded?: () => Degradation[];
  readonly maxBodyBytes: number;
  readonly log: Logger;
  /** AEP_MAX_BODY_NODES: JSON values + object keys a body may hold (checked before it is parsed) */
  readonly maxBodyNodes?: number;
  /** where the compiled JSON worker lives (tests running from source point at dist) */
  readonly jsonWorkerUrl?: URL;
  /** Host/Origin/token checks, before anything else (the daemon always sets one) */
  readonly guard?: RequestGuard;
  /** the plugin transport's drop counts (a request header), for /healthz `transport.plugin` */
  readonly dropReports?: DropReports;
  /** the AEP stream bindings (discovery, POST /events, GET /stream): registered when given */
  readonly stream?: StreamHttpDeps;
  /** the control target, when a control gate is on: holds a gated hook's reply until its card is answered */
  readonly control?: Pick<ControlTarget, 'hold' | 'abandon'>;
  /** Hermes's outbound webhooks (`POST /webhook`): registered when given (the daemon gives it with TCP on) */
  readonly webhook?: WebhookDeps;
  /** the live view (`/ui`, `/ui/state`, `/ui/command`): registered when given (AEP_UI=on) */
  readonly ui?: UiDeps;
}

/**
 * Iterative, so a hostile body cannot blow the stack while being measured; no
 * allocation per node. A body parsed by json-body.ts was measured by its scan
 * already: that answer is used instead of walking it again.
 */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  const known = knownDepth(value);
  if (known !== undefined) return known > limit;
  const values: unknown[] = [value];
  const depths: number[] = [0];
  const push = (child: unknown, d: number) => {
    if (typeof child !== 'object' || child === null) return;
    values.push(child);
    depths.push(d);
  };
  while (values.length > 0) {
    const v = values.pop() as object;
    const d = depths.pop()!;
    if (d >= limit) return true;
    if (Array.isArray(v)) for (const child of v) push(child, d + 1);
    else for (const k in v) push((v as Record<string, unknown>)[k], d + 1);
  }
  return false;
}

/** Every way a request can be refused before the route runs: the catalogue's code (core/errors.ts) for each of fastify's and json-body.ts's. */
const REFUSALS: Readonly<Record<string, HttpErrorCode>> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported-media-type',
  FST_ERR_CTP_BODY_TOO_LARGE: 'too-large',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'empty-body',
  FST_ERR_CTP_INVALID_JSON_BODY: 'invalid-json',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'bad-content-length',
  // json-body.ts: refused before parsing, with the same codes whether parsed in place or on the worker
  'empty-body': 'empty-body',
  'too-deep': 'too-deep',
  'too-many-nodes': 'too-many-nodes',
  'parser-unavailable': 'parser-unavailable',
  busy: 'busy',
};

/**
 * The reply a processed hook gets: `{}` (observe-only), unless a control gate
 * planned otherwise. A held card waits for its answer, expiry, or the hook's
 * connection going away; one whose events did not reach the history is not
 * held (closed at once: the call proceeds, as the vendor's fail-open does).
 */
async function replyOf(outcome: HookOutcome, control: ServerDeps['control'], reply: FastifyReply): Promise<HookReply> {
  const plan = outcome.plan;
  if (!plan) return EMPTY_REPLY;
  if (plan.kind === 'context') return outcome.status === 'refused' ? EMPTY_REPLY : { context: plan.context };
  // every path below that does not hold gives the cap's slot back (release is idempotent)
  if (outcome.status === 'refused') {
    plan.slot.release();
    return EMPTY_REPLY;
  }
  // the gate's card is the hook's first card (inserted before any form card); at capture `none` its data is empty
  const card = outcome.events.find((e) => e.type === 'attention.requested');
  if (!card || !control) {
    plan.slot.release();
    return EMPTY_REPLY;
  }
  if (outcome.status !== 'recorded') {
    control.abandon(card, plan.slot);
    return EMPTY_REPLY;
  }
  const res = reply.raw;
  const gone = new Promise<void>((resolve) => res.once('close', () => !res.writableFinished && resolve()));
  return control.hold(card, plan.holdMs, gone, plan.slot);
}

/**
 * The daemon's HTTP surface: `POST /hook` (one Hermes envelope in, the hook
 * reply out) and `GET /healthz`. Errors are answered with a code and a fixed
 * reason: request bodies are content, so no error ever quotes them.
 */
export function buildServer(deps: ServerDeps): FastifyInstance {
  // fastify logs through the diagnostics' own pino (same redaction, same stderr), with no line per request
  const pino: FastifyBaseLogger | undefined = pinoOf(deps.log);
  const app = Fastify({
    // requests log through the daemon's logger itself: no per-request child (a pino child per hook, with no request lines to bind it to)
    ...(pino
      ? { loggerInstance: pino, logController: new LogController({ disableRequestLogging: true }), childLoggerFactory: (logger: FastifyBaseLogger) => logger }
      : { logger: false }),
    bodyLimit: deps.maxBodyBytes,
    return503OnClosing: true,
    // __proto__ / constructor.prototype keys are stripped, not refused: they are data, never used as prototypes here
    onProtoPoisoning: 'remove',
    onConstructorPoisoning: 'remove',
  });
  let rejected = 0;
  // JSON only: a text body is refused as a media-type error, not half-parsed.
  app.removeContentTypeParser('text/plain');
  // Host/Origin (and, over TCP, the token) first: a refused request's body is never read.
  if (deps.guard) app.addHook('onRequest', deps.guard.onRequest);
  // Bounded JSON: nodes and depth are counted before parsing; large bodies parse on a worker.
  const json = new JsonBodyParser(
    {
      maxBytes: deps.maxBodyBytes,
      maxNodes: deps.maxBodyNodes ?? DEFAULT_MAX_BODY_NODES,
      maxDepth: MAX_DEPTH,
      ...(deps.jsonWorkerUrl ? { workerUrl: deps.jsonWorkerUrl } : {}),
    },
    { tooLarge: () => new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE(), badLength: () => new errorCodes.FST_ERR_CTP_INVALID_CONTENT_LENGTH() },
  );
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', (req: FastifyRequest, payload: NodeJS.ReadableStream) => json.read(payload, req.headers['content-length']));
  app.addHook('onClose', () => json.close());

  app.setErrorHandler((err, _req, reply) => {
    rejected++;
    const code = (err as { code?: string }).code ?? '';
    const known = (Object.hasOwn(REFUSALS, code) ? REFUSALS[code] : undefined) ?? (err instanceof SyntaxError ? 'invalid-json' : undefined);
    // a real hook lost to the node cap should be visible to the operator (structure only)
    if (code === 'too-many-nodes')
      deps.log.warn('a hook body was refused: more JSON values and keys than AEP_MAX_BODY_NODES', { max: deps.maxBodyNodes ?? DEFAULT_MAX_BODY_NODES });
    if (known) return reply.code(errorStatus(known)).send(errorBody(known));
    deps.log.error('request failed', { code: code || (err as Error).name });
    return reply.code(errorStatus('internal')).send(errorBody('internal', 'the daemon could not process this hook'));
  });
  app.setNotFoundHandler((_req, reply) => reply.code(errorStatus('not-found')).send(errorBody('not-found')));

  app.post('/hook', async (req, reply) => {
    const drops = deps.dropReports ? deps.dropReports.read(req.headers[DROPPED_HEADER]) : 0;
    if (drops === undefined) {
      rejected++;
      return reply.code(errorStatus('bad-drop-report')).send(errorBody('bad-drop-report', `${DROPPED_HEADER} must be one decimal count (0..999999999)`));
    }
    const spoolKey = readSpoolKey(req.headers[SPOOL_KEY_HEADER]);
    if (spoolKey === false) {
      rejected++;
      return reply.code(errorStatus('bad-spool-key')).send(errorBody('bad-spool-key', `${SPOOL_KEY_HEADER} must be a spool file key`));
    }
    if (nestsDeeperThan(req.body, MAX_DEPTH)) {
      rejected++;
      return reply.code(errorStatus('too-deep')).send(errorBody('too-deep'));
    }
    const parsed = hookEnvelopeSchema.safeParse(req.body);
    if (!parsed.success) {
      rejected++;
      // Paths and rule names only: zod messages here never include values.
      const reason = parsed.error.issues
        .slice(0, 5)
        .map((i) => `${i.path.join('.') || '(body)'}: ${i.code}`)
        .join('; ');
      return reply.code(errorStatus('invalid-envelope')).send(errorBody('invalid-envelope', `not a Hermes hook envelope (${reason})`));
    }
    deps.recorder?.record(req.body, parsed.data.session_id);
    // Answered once the events reached the operating system (group commit), never before.
    const outcome = await deps.pipeline.handle(parsed.data, undefined, deps.control ? liveHookOf(req.headers) : undefined, spoolKey);
    // Refused = not processed at all, so a retry (the shim's spool) records it exactly once.
    if (outcome.status === 'refused') {
      return reply
        .code(errorStatus('unavailable'))
        .send(errorBody('unavailable', 'the event log cannot take hooks now; nothing of this one was recorded', { reason: outcome.reason }));
    }
    const answer = await replyOf(outcome, deps.control, reply);
    // Not in the history now, so never 200 (a crash would lose it): 503, and the transport spools it.
    // `retained`: held in memory under the spool key it sent, written later carrying that key, so the
    // spooled copy is recognised and dropped (pipeline.ts); `lost`: nothing of it will be written,
    // so the spooled copy is processed once.
    if (outcome.status === 'retained' || outcome.status === 'lost') {
      return reply
        .code(errorStatus('unavailable'))
        .send(errorBody('unavailable', 'the event log could not write this hook now; the transport spools it', { reason: outcome.reason }));
    }
    // Observe-only: the reply never injects context.
    deps.dropReports?.add(drops);
    return reply.code(200).send(answer);
  });

  if (deps.stream) void app.register(streamRoutes(deps.stream));
  if (deps.ui) void app.register(uiRoutes(deps.ui));
  if (deps.webhook)
    void app.register(
      webhookRoute({
        ...deps.webhook,
        pipeline: deps.pipeline,
        ...(deps.recorder ? { recorder: deps.recorder } : {}),
        maxBodyBytes: deps.maxBodyBytes,
        parse: (raw, length) => json.read(raw, length),
        refusalOf: (err) => {
          const code = (err as { code?: string }).code ?? '';
          return (Object.hasOwn(REFUSALS, code) ? REFUSALS[code] : undefined) ?? (err instanceof SyntaxError ? 'invalid-json' : undefined);
        },
        log: deps.log,
      }),
    );

  app.get('/healthz', async (_req, reply) => {
    const degraded = deps.degraded?.() ?? [];
    const ok = degraded.length === 0;
    // 503 while degraded, so a plain HTTP healthcheck (compose, a supervisor) sees it
    return reply
      .code(ok ? 200 : 503)
      .send({ ok, status: ok ? 'ok' : 'degraded', degraded, ...deps.health(), http: { rejected, large_bodies_busy: json.refusedBusy } });
  });
  return app;
}
