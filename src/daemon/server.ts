import Fastify, { type FastifyInstance } from 'fastify';
import { hookEnvelopeSchema } from '../hermes/envelope.js';
import type { HookPipeline } from './pipeline.js';
import type { Logger } from './log.js';
import type { EnvelopeRecorder } from './envelope-recorder.js';
import type { Degradation } from '../sinks/health-latch.js';

export interface ServerDeps {
  readonly pipeline: HookPipeline;
  /** the opt-in raw-envelope recorder (AEP_RECORD_DIR) */
  readonly recorder?: EnvelopeRecorder;
  readonly health: () => Record<string, unknown>;
  /** what cannot do its job right now: non-empty turns /healthz `degraded` (HTTP 503) */
  readonly degraded?: () => Degradation[];
  readonly maxBodyBytes: number;
  readonly log: Logger;
}

/** Hermes payloads nest a handful of levels; the bound keeps every recursive walk (digest, redaction) safe. */
export const MAX_DEPTH = 64;

/** Iterative, so a hostile body cannot blow the stack while being measured. */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, d] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (d >= limit) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, d + 1]);
  }
  return false;
}

/** Fixed, content-free messages for every way a request can be refused. */
const REFUSALS: Readonly<Record<string, { status: number; message: string }>> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { status: 415, message: 'content-type must be application/json' },
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, message: 'body exceeds AEP_MAX_BODY_BYTES' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { status: 400, message: 'body is empty' },
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, message: 'body is not valid JSON' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { status: 400, message: 'content-length does not match the body' },
};

/**
 * The daemon's HTTP surface: `POST /hook` (one Hermes envelope in, the hook
 * reply out) and `GET /healthz`. Errors are answered with a code and a fixed
 * reason: request bodies are content, so no error ever quotes them.
 */
export function buildServer(deps: ServerDeps): FastifyInstance {
  // __proto__ / constructor.prototype keys are stripped, not refused: they are data, never used as prototypes here
  const app = Fastify({ logger: false, bodyLimit: deps.maxBodyBytes, return503OnClosing: true, onProtoPoisoning: 'remove', onConstructorPoisoning: 'remove' });
  let rejected = 0;
  // JSON only: a text body is refused as a media-type error, not half-parsed.
  app.removeContentTypeParser('text/plain');

  app.setErrorHandler((err, _req, reply) => {
    rejected++;
    const code = (err as { code?: string }).code ?? '';
    const known = REFUSALS[code] ?? (err instanceof SyntaxError ? REFUSALS.FST_ERR_CTP_INVALID_JSON_BODY : undefined);
    if (known) return reply.code(known.status).send({ error: code || 'invalid_json', message: known.message });
    deps.log.error('request failed', { code: code || (err as Error).name });
    return reply.code(500).send({ error: 'internal', message: 'the daemon could not process this hook' });
  });
  app.setNotFoundHandler((_req, reply) => reply.code(404).send({ error: 'not_found', message: 'no such route' }));

  app.post('/hook', async (req, reply) => {
    if (nestsDeeperThan(req.body, MAX_DEPTH)) {
      rejected++;
      return reply.code(400).send({ error: 'too_deep', message: `body nests deeper than ${MAX_DEPTH} levels` });
    }
    const parsed = hookEnvelopeSchema.safeParse(req.body);
    if (!parsed.success) {
      rejected++;
      // Paths and rule names only: zod messages here never include values.
      const reason = parsed.error.issues
        .slice(0, 5)
        .map((i) => `${i.path.join('.') || '(body)'}: ${i.code}`)
        .join('; ');
      return reply.code(400).send({ error: 'invalid_envelope', message: `not a Hermes hook envelope (${reason})` });
    }
    deps.recorder?.record(req.body, parsed.data.session_id);
    // Answered once the events reached the operating system (group commit), never before.
    const outcome = await deps.pipeline.handle(parsed.data);
    // Refused = not processed at all, so a retry (the shim's spool) records it exactly once.
    if (outcome.status === 'refused') {
      return reply.code(503).send({ error: 'unavailable', message: 'the event log cannot take hooks now; nothing of this one was recorded', reason: outcome.reason });
    }
    // Observe-only: the reply never injects context. `retained` (write failed, held in memory
    // until the log recovers) and `lost` (counted) are answered 200 too: the hook was processed,
    // its seqs and spans exist, so a retry would duplicate them.
    return reply.code(200).send({});
  });

  app.get('/healthz', async (_req, reply) => {
    const degraded = deps.degraded?.() ?? [];
    const ok = degraded.length === 0;
    // 503 while degraded, so a plain HTTP healthcheck (compose, a supervisor) sees it
    return reply.code(ok ? 200 : 503).send({ ok, status: ok ? 'ok' : 'degraded', degraded, ...deps.health(), http: { rejected } });
  });
  return app;
}
