/**
 * The live view's routes, as an encapsulated fastify plugin (its own body
 * parser, error replies and headers):
 * - `GET /ui`, `/ui/`, `/ui/<file>`: the page's files (static-files.ts), no token;
 * - `GET /ui/state`: the stream's read rule (stream-auth.ts);
 * - `POST /ui/command`: AEP_TOKEN in `Authorization` only, JSON of at most 16 KB.
 * The request guard lets the page's own Origin through on these paths only
 * (transport/request-guard.ts); the command route checks it again.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errorBody, errorStatus, httpRefusal } from '../core/errors.js';
import { isRefusal } from '../stream/stream-auth.js';
import { readRawBody, StreamHttpError } from '../stream/http/raw-body.js';
import { sameOrigin } from '../transport/request-guard.js';
import { AnswerToken } from './bearer.js';
import { MAX_COMMAND_BYTES, readCommandBody } from './command-body.js';
import { runCommand } from './command-route.js';
import type { UiDeps } from './deps.js';
import { SECURITY_HEADERS } from './security-headers.js';
import { acceptsGzip, loadUiFiles, type UiFiles } from './static-files.js';
import { uiState } from './ui-state.js';

const NO_ANSWER_TOKEN = httpRefusal('unauthorized', 'answers need Authorization: Bearer <AEP_TOKEN> (the daemon needs AEP_TOKEN set)');
const FOREIGN_ORIGIN = httpRefusal('forbidden-origin', "only the live view's own page (Origin http://<Host>) may send answers");
const MEDIA = httpRefusal('unsupported-media-type', 'content-type must be application/json');
const TOO_LARGE = httpRefusal('too-large', `a command body is at most ${MAX_COMMAND_BYTES} bytes`);

export function uiRoutes(deps: UiDeps) {
  return async function plugin(app: FastifyInstance): Promise<void> {
    const token = new AnswerToken(deps.token);
    let files: Promise<UiFiles> | undefined;
    const filesOnce = () =>
      (files ??= loadUiFiles(deps.dir).then((f) => {
        if (f.size === 0) deps.log.warn('the live view has no files to serve (its ui/ folder is missing or empty)', { dir: deps.dir });
        return f;
      }));

    app.addHook('onSend', async (_req, reply, payload) => {
      void reply.headers(SECURITY_HEADERS);
      return payload;
    });
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', async (req: FastifyRequest, payload: NodeJS.ReadableStream) => {
      const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
      if (type !== 'application/json') throw new StreamHttpError(MEDIA);
      const raw = await readRawBody(payload, MAX_COMMAND_BYTES, req.headers['content-length']).catch((err: unknown) => {
        throw err instanceof StreamHttpError && err.refusal.body.error === 'too-large' ? new StreamHttpError(TOO_LARGE) : err;
      });
      if (raw.length === 0) throw new StreamHttpError(httpRefusal('empty-body'));
      try {
        return JSON.parse(raw.toString('utf8')) as unknown;
      } catch {
        throw new StreamHttpError(httpRefusal('invalid-json'));
      }
    });
    app.setErrorHandler((err, _req, reply) => {
      if (err instanceof StreamHttpError) return reply.code(err.refusal.status).send(err.refusal.body);
      const code = (err as { code?: string }).code ?? '';
      if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return reply.code(MEDIA.status).send(MEDIA.body);
      if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') return reply.code(TOO_LARGE.status).send(TOO_LARGE.body);
      deps.log.error('live view request failed', { code: code || (err as Error).name });
      return reply.code(errorStatus('internal')).send(errorBody('internal'));
    });

    const serve = async (name: string, req: FastifyRequest, reply: FastifyReply) => {
      const f = (await filesOnce()).get(name);
      if (!f) return reply.code(errorStatus('not-found')).send(errorBody('not-found'));
      const gz = acceptsGzip(req.headers['accept-encoding']);
      void reply.header('vary', 'Accept-Encoding').type(f.type);
      if (gz) void reply.header('content-encoding', 'gzip');
      return reply.send(gz ? f.gzip : f.raw);
    };
    app.get('/ui', (req, reply) => serve('index.html', req, reply));
    app.get('/ui/', (req, reply) => serve('index.html', req, reply));
    app.get<{ Params: { file: string } }>('/ui/:file', (req, reply) => serve(req.params.file, req, reply));

    app.get('/ui/state', async (req, reply) => {
      const access = deps.auth.credentials(req.raw, 'read', req.headers.origin !== undefined);
      if (isRefusal(access)) {
        if (access.status === 401) void reply.header('www-authenticate', 'Bearer');
        return reply.code(access.status).send(access.body);
      }
      return reply.type('application/json').send(uiState(deps, token.presented(req.headers.authorization)));
    });

    const answerGate = async (req: FastifyRequest, reply: FastifyReply) => {
      // before the body is read: the page's own origin (or none: a script, curl), then AEP_TOKEN
      if (req.headers.origin !== undefined && !sameOrigin(req.headers.origin, req.headers.host)) {
        return reply.code(FOREIGN_ORIGIN.status).send(FOREIGN_ORIGIN.body);
      }
      if (!token.presented(req.headers.authorization)) {
        return reply.code(NO_ANSWER_TOKEN.status).header('www-authenticate', 'Bearer').send(NO_ANSWER_TOKEN.body);
      }
      return undefined;
    };
    app.post('/ui/command', { onRequest: answerGate, bodyLimit: MAX_COMMAND_BYTES }, async (req, reply) => {
      const read = readCommandBody(req.body);
      if (!read.ok) return reply.code(errorStatus('invalid-command')).send(errorBody('invalid-command', read.detail));
      const answer = await runCommand(deps, read.body);
      return reply.code(answer.status).send(answer.body);
    });
  };
}
