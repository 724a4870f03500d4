import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Subscription } from '../hub-types.js';
import { isRefusal } from '../stream-auth.js';
import type { StreamHttpDeps } from './deps.js';
import { AEP_VERSIONS, discoveryDocument } from './discovery.js';
import { parseIngestBody, versionSupported } from './ingest-body.js';
import { readSseRequest } from './sse-request.js';
import { sseSink } from './sse-sink.js';

const NDJSON = 'application/x-ndjson';

/** The refusal every binding shares for a body the route cannot take; fixed reasons only. */
const MEDIA = { error: 'unsupported-media-type', message: `content-type must be application/json (one event) or ${NDJSON} (a batch)` };

/**
 * The embedded AEP endpoint's HTTP routes (AEP-0003 §3.2–§3.4): discovery,
 * ingest and the SSE stream, in their own encapsulated context (their body
 * parsers keep the raw text, so an ingested event's bytes are what it
 * arrived with). The WebSocket `/socket` is served by the listeners' upgrade
 * handler (src/stream/socket).
 */
export function streamRoutes(d: StreamHttpDeps) {
  return async (app: FastifyInstance): Promise<void> => {
    app.removeAllContentTypeParsers();
    for (const type of ['application/json', NDJSON])
      app.addContentTypeParser(type, { parseAs: 'string', bodyLimit: d.maxBodyBytes }, (_req, body, done) => done(null, body));

    app.setErrorHandler((err, _req, reply) => {
      const code = (err as { code?: string }).code ?? '';
      if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return reply.code(415).send(MEDIA);
      if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') return reply.code(413).send({ error: 'too-large', message: 'body exceeds AEP_MAX_BODY_BYTES' });
      if (code === 'FST_ERR_CTP_EMPTY_JSON_BODY') return reply.code(400).send({ error: 'invalid-event', detail: 'body is empty' });
      d.log.error('stream request failed', { code: code || (err as Error).name });
      return reply.code(500).send({ error: 'internal', message: 'the daemon could not process this request' });
    });

    const discovery = (req: FastifyRequest, reply: FastifyReply) => {
      const access = d.auth.check(req.raw, 'read');
      if (isRefusal(access)) return reply.code(access.status).send(access.body);
      return reply.code(200).header('cache-control', 'no-store').send(discoveryDocument(d.hub));
    };
    app.get('/events', discovery);
    app.get('/.well-known/aep', discovery);

    app.post('/events', async (req, reply) => {
      // the version gate first: the versions spoken are public (the discovery document), the body is read only once authorised
      if (!versionSupported(req.headers['aep-version'])) return reply.code(426).send({ versions: [...AEP_VERSIONS] });
      const access = d.auth.check(req.raw, 'write');
      if (isRefusal(access)) return reply.code(access.status).send(access.body);
      const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
      const parsed = parseIngestBody(typeof req.body === 'string' ? req.body : '', type === NDJSON ? 'ndjson' : 'json', {
        maxEvents: d.ingestMaxEvents,
        ownSourcePrefix: d.ownSourcePrefix,
      });
      if (!parsed.ok) return reply.code(parsed.status).send({ error: parsed.error, detail: parsed.detail });
      const outcome = await d.ingress.ingest(parsed.events);
      if (outcome.status === 'refused') return reply.code(503).send({ error: 'unavailable', message: 'the history cannot take events now; nothing was taken', reason: outcome.reason });
      return reply.code(202).send({ accepted: outcome.accepted, duplicates: outcome.duplicates });
    });

    app.get('/stream', (req, reply) => {
      const access = d.auth.check(req.raw, 'read');
      if (isRefusal(access)) return reply.code(access.status).send(access.body);
      const asked = readSseRequest(req.query as Record<string, unknown>, req.headers['last-event-id']);
      if (!asked.ok) return reply.code(400).send({ error: 'invalid-filter', detail: asked.detail });
      const res = reply.raw;
      let started = false;
      let ended = false;
      let heartbeat: NodeJS.Timeout | undefined;
      let subscription: Subscription | undefined;
      const start = () => {
        if (started) return;
        started = true;
        reply.hijack();
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-accel-buffering': 'no', connection: 'keep-alive' });
        res.flushHeaders();
        heartbeat = setInterval(() => !res.writableEnded && res.write(': ping\n\n'), d.heartbeatMs);
        heartbeat.unref();
      };
      const end = () => {
        if (ended) return;
        ended = true;
        clearInterval(heartbeat);
        subscription?.close();
        if (!res.writableEnded) res.end();
      };
      const live = asked.spec.live !== false;
      const sub = d.hub.subscribe(asked.spec, sseSink(res, { start, end, live }));
      if ('code' in sub) {
        if (started) return end();
        return reply.code(429).send({ error: sub.code, detail: sub.detail });
      }
      subscription = sub;
      start();
      req.raw.on('close', end);
      if (ended) sub.close();
      return undefined;
    });
  };
}
