import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errorBody, errorStatus, httpRefusal, type HttpErrorCode } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { hookEnvelopeSchema } from '../hermes/envelope.js';
import { readRawBody, StreamHttpError } from '../stream/http/raw-body.js';
import { checkDelivery } from '../transport/webhook/delivery.js';
import type { DeliveryLedger } from '../transport/webhook/delivery-ledger.js';
import { SIGNATURE_HEADER, signatureMatches } from '../transport/webhook/signature.js';
import type { EnvelopeRecorder } from './envelope-recorder.js';
import type { HookPipeline } from './pipeline.js';

/** What the daemon counts of Hermes's outbound webhooks (/healthz `transport.webhook`). */
export class WebhookStats {
  /** processed and durable, answered 200 */
  accepted = 0;
  /** a delivery id already accepted: answered 200, not processed again */
  replayed = 0;
  /** no signature, or not the body's under the secret: 401 */
  bad_signature = 0;
  /** signed, but its timestamp is outside the window: 400 */
  stale = 0;
  /** signed, but the headers differ from the body, or it is no delivery or no hook envelope: 400 */
  malformed = 0;
  /** the event log could not take it (or the spool was draining): 503, Hermes retries once */
  unavailable = 0;
}

export interface WebhookDeps {
  /** the shared secret ({stateDir}/webhook-secret) */
  readonly secret: string;
  /** AEP_WEBHOOK_WINDOW_S in ms: a timestamp further from the daemon's clock, either way, is refused */
  readonly windowMs: number;
  readonly ledger: DeliveryLedger;
  readonly stats: WebhookStats;
  readonly now?: () => number;
}

export interface WebhookRouteDeps extends WebhookDeps {
  readonly pipeline: HookPipeline;
  readonly recorder?: EnvelopeRecorder;
  readonly maxBodyBytes: number;
  /** the server's bounded JSON parse (nodes and depth scanned first; large bodies on the worker) */
  readonly parse: (raw: Readable, length: string) => Promise<unknown>;
  /** the codes of the server's body refusals (server.ts REFUSALS) */
  readonly refusalOf: (err: unknown) => HttpErrorCode | undefined;
  readonly log: Logger;
}

type Ending = 'accepted' | 'replayed' | 'unavailable';

/**
 * `POST /webhook`: Hermes's outbound webhooks (agent/outbound_webhooks.py,
 * NousResearch/hermes-agent 1fda2280). An encapsulated plugin with its own
 * body parser: the raw bytes, bounded, so the signature is checked over
 * exactly what Hermes signed, before a byte of it is parsed. The HMAC is the
 * route's authentication (Hermes cannot send the hook token; RequestGuard
 * skips it here and checks Host and Origin as for every route).
 *
 * A delivery is verified (signature, then the body's id and time against its
 * headers and the window), deduplicated (the ledger, across restarts), and
 * its envelope (the body without `delivery_id` and `timestamp`) goes through
 * the same pipeline as `POST /hook`: the history holds what the shell hook of
 * the same Hermes would have made. Answered 200 `{}` only once its events
 * are durable; 503 when the log cannot take them (Hermes retries a 5xx once,
 * 1 s later; it never retries a 4xx).
 */
export function webhookRoute(deps: WebhookRouteDeps) {
  const now = deps.now ?? Date.now;
  const stats = deps.stats;
  /** deliveries being processed: a retry that arrives meanwhile waits for the first's ending */
  const inFlight = new Map<string, Promise<Ending>>();
  const refuse = (reply: FastifyReply, code: HttpErrorCode, detail?: string) => reply.code(errorStatus(code)).send(errorBody(code, detail));

  return async function plugin(app: FastifyInstance): Promise<void> {
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', (req: FastifyRequest, payload: NodeJS.ReadableStream) => {
      const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
      if (type !== 'application/json') return Promise.reject(new StreamHttpError(httpRefusal('unsupported-media-type')));
      return readRawBody(payload, deps.maxBodyBytes, req.headers['content-length']);
    });
    app.setErrorHandler((err, _req, reply) => {
      stats.malformed++;
      if (err instanceof StreamHttpError) return reply.code(err.refusal.status).send(err.refusal.body);
      const code = (err as { code?: string }).code ?? '';
      if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return refuse(reply, 'unsupported-media-type');
      if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') return refuse(reply, 'too-large');
      if (code === 'FST_ERR_CTP_EMPTY_JSON_BODY') return refuse(reply, 'empty-body');
      deps.log.error('webhook request failed', { code: code || (err as Error).name });
      return reply.code(errorStatus('internal')).send(errorBody('internal', 'the daemon could not process this delivery'));
    });

    app.post('/webhook', async (req, reply) => {
      const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      if (!signatureMatches(deps.secret, raw, req.headers[SIGNATURE_HEADER])) {
        stats.bad_signature++;
        return refuse(reply, 'bad-signature');
      }
      let body: unknown;
      try {
        body = await deps.parse(Readable.from([raw]), String(raw.length));
      } catch (err) {
        const code = deps.refusalOf(err);
        if (code && errorStatus(code) === 503) stats.unavailable++;
        else stats.malformed++;
        return refuse(reply, code ?? 'invalid-json');
      }
      const checked = checkDelivery(body, req.headers, now(), deps.windowMs);
      if (!checked.ok) {
        if (checked.why === 'stale-delivery') stats.stale++;
        else stats.malformed++;
        return refuse(reply, checked.why, checked.detail);
      }
      const env = hookEnvelopeSchema.safeParse(checked.envelope);
      if (!env.success) {
        stats.malformed++;
        // paths and rule names only: zod messages here never include values
        const reason = env.error.issues
          .slice(0, 5)
          .map((i) => `${i.path.join('.') || '(body)'}: ${i.code}`)
          .join('; ');
        return refuse(reply, 'invalid-envelope', `not a Hermes hook envelope (${reason})`);
      }
      // a retry of a delivery still being processed waits for it; one that ended unrecorded is processed afresh
      for (let earlier = inFlight.get(checked.id); earlier; earlier = inFlight.get(checked.id)) await earlier.catch(() => undefined);
      if (deps.ledger.has(checked.id)) {
        stats.replayed++;
        return reply.code(200).send({});
      }
      const run = (async (): Promise<Ending> => {
        deps.recorder?.record(checked.envelope, env.data.session_id);
        const outcome = await deps.pipeline.handle(env.data);
        // no live hook is declared, so no card is held; a plan's slot (none expected) goes back
        if (outcome.plan?.kind === 'hold') outcome.plan.slot.release();
        if (outcome.status !== 'recorded') return 'unavailable';
        await deps.ledger.add(checked.id, checked.at);
        return 'accepted';
      })();
      inFlight.set(checked.id, run);
      let ending: Ending;
      try {
        ending = await run;
      } finally {
        inFlight.delete(checked.id);
      }
      if (ending === 'unavailable') {
        stats.unavailable++;
        return refuse(reply, 'unavailable', 'the event log could not take this delivery now; nothing of it was recorded');
      }
      stats.accepted++;
      return reply.code(200).send({});
    });
  };
}
