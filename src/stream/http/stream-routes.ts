import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errorBody, errorStatus, httpRefusal } from '../../core/errors.js';
import { isRefusal } from '../stream-auth.js';
import type { StreamHttpDeps } from './deps.js';
import { discoveryDocument } from './discovery.js';
import { ingestHandler } from './ingest-route.js';
import { ingestMediaType, readRawBody, StreamHttpError } from './raw-body.js';
import { sseHandler, type OpenStreams } from './sse-route.js';
import { VERSION_REFUSAL, versionSupported } from './version-gate.js';

export type { StreamHttpDeps } from './deps.js';

const UNSUPPORTED_MEDIA = httpRefusal('unsupported-media-type', 'content-type must be application/json or application/x-ndjson');

/**
 * The AEP HTTP bindings (AEP-0003 §3.2–§3.4) as an encapsulated fastify
 * plugin: its own body parser (raw bytes, bounded), its own error replies,
 * and access per request (`StreamAuth`: read for discovery and the stream,
 * write for ingest) before any body is read.
 */
export function streamRoutes(deps: StreamHttpDeps) {
  return async function plugin(app: FastifyInstance): Promise<void> {
    const open: OpenStreams = new Set();
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', (req: FastifyRequest, payload: NodeJS.ReadableStream) => {
      if (!ingestMediaType(req.headers['content-type'])) return Promise.reject(new StreamHttpError(UNSUPPORTED_MEDIA));
      return readRawBody(payload, deps.maxBodyBytes, req.headers['content-length']);
    });
    app.setErrorHandler((err, _req, reply) => {
      if (err instanceof StreamHttpError) return reply.code(err.refusal.status).send(err.refusal.body);
      const code = (err as { code?: string }).code ?? '';
      if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return reply.code(UNSUPPORTED_MEDIA.status).send(UNSUPPORTED_MEDIA.body);
      if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') return reply.code(errorStatus('too-large')).send(errorBody('too-large'));
      deps.log.error('stream request failed', { code: code || (err as Error).name });
      return reply.code(errorStatus('internal')).send(errorBody('internal'));
    });

    const access = (need: 'read' | 'write') => async (req: FastifyRequest, reply: FastifyReply) => {
      // the version gate first: the versions spoken are public (the discovery document says them)
      if (need === 'write' && !versionSupported(req.headers['aep-version'])) return reply.code(426).send(VERSION_REFUSAL);
      const a = deps.auth.check(req.raw, need);
      if (isRefusal(a)) {
        // the route pattern, never the URL: a query may carry `access_token` (AEP-0003 §8.1)
        deps.log.debug('stream request refused', { status: a.status, route: req.routeOptions.url ?? '' });
        if (a.status === 401) void reply.header('www-authenticate', 'Bearer');
        return reply.code(a.status).send(a.body);
      }
      return undefined;
    };

    const discovery = async (_req: FastifyRequest, reply: FastifyReply) => reply.type('application/json').send(discoveryDocument(deps.hub, deps.control));
    app.get('/events', { onRequest: access('read') }, discovery);
    app.get('/.well-known/aep', { onRequest: access('read') }, discovery);
    app.post('/events', { onRequest: access('write'), bodyLimit: deps.maxBodyBytes }, ingestHandler(deps));
    app.get('/stream', { onRequest: access('read') }, sseHandler(deps, open));

    app.addHook('preClose', async () => {
      for (const s of [...open]) s.kick('daemon stopping');
    });
  };
}
