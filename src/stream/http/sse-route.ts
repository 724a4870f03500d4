import type { FastifyReply, FastifyRequest } from 'fastify';
import type { StreamHttpDeps } from './deps.js';
import { SseSink } from './sse-sink.js';
import { subscriptionOf } from './subscription-query.js';
import { errorBody, errorStatus } from '../../core/errors.js';

/** Open SSE responses, so a stopping daemon can end them (fastify waits for open connections). */
export type OpenStreams = Set<SseSink>;

/**
 * `GET /stream` (AEP-0003 §3.3): validates the subscription (400
 * `invalid-filter`), asks the hub (429 `limit-exceeded`), then streams.
 * Access was checked by the plugin's onRequest hook.
 */
export function sseHandler(deps: StreamHttpDeps, open: OpenStreams) {
  return async (req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    const url = req.raw.url ?? '/';
    const q = url.indexOf('?');
    const query = new URLSearchParams(q < 0 ? '' : url.slice(q + 1));
    const lastId = req.headers['last-event-id'];
    const parsed = subscriptionOf(query, Array.isArray(lastId) ? lastId[0] : lastId, deps.parsers);
    if (!parsed.ok) return reply.code(errorStatus('invalid-filter')).send(errorBody('invalid-filter', parsed.detail));

    const res = reply.raw;
    const headers: Record<string, string> = {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      'x-accel-buffering': 'no',
    };
    const origin = req.headers.origin;
    if (origin !== undefined) Object.assign(headers, { 'access-control-allow-origin': origin, vary: 'Origin' });

    // filled once the hub answers; the sink may end before that (a replay-only stream, a kick during replay)
    const state: { subscription?: { close(): void }; gone: boolean } = { gone: false };
    const sink = new SseSink(res, {
      heartbeatMs: deps.heartbeatMs,
      live: parsed.spec.live !== false,
      begin: () => {
        reply.hijack();
        res.writeHead(200, headers);
        res.flushHeaders();
      },
      onEnd: () => {
        state.gone = true;
        open.delete(sink);
        state.subscription?.close();
      },
    });
    // the hub may replay synchronously: the sink sends the head before its first byte
    const outcome = deps.hub.subscribe(parsed.spec, sink);
    if ('code' in outcome) return reply.code(errorStatus(outcome.code)).send(errorBody(outcome.code, outcome.detail));
    state.subscription = outcome;
    if (state.gone) outcome.close();
    else {
      sink.open();
      open.add(sink);
    }
    return reply;
  };
}
