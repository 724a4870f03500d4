import type { FastifyReply, FastifyRequest } from 'fastify';
import { DEFAULT_MAX_BODY_NODES } from '../../config/config.js';
import { MAX_DEPTH } from '../../core/limits.js';
import type { StreamHttpDeps } from './deps.js';
import { ownSourceCheck } from '../own-source.js';
import { parseIngestBody } from './ingest-body.js';
import { ingestMediaType } from './raw-body.js';
import { errorBody, errorStatus } from '../../core/errors.js';

/**
 * `POST /events` (AEP-0003 §3.2): the body (read raw and bounded by the
 * plugin's parser) becomes wire events, all or nothing, then the bridge takes
 * them; 202 once the history has them. Access and `AEP-Version` were checked
 * before the body was read.
 */
export function ingestHandler(deps: StreamHttpDeps) {
  const limits = {
    maxEvents: deps.ingestMaxEvents,
    maxNodes: deps.maxBodyNodes ?? DEFAULT_MAX_BODY_NODES,
    maxDepth: MAX_DEPTH,
    ownSource: ownSourceCheck(deps.ownSourcePrefix),
  };
  return async (req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    const body = req.body;
    if (!Buffer.isBuffer(body) || body.length === 0)
      return reply.code(errorStatus('invalid-event')).send(errorBody('invalid-event', 'line 1: the body is empty'));
    const parsed = parseIngestBody(body, ingestMediaType(req.headers['content-type']) === 'application/x-ndjson', limits);
    if (!parsed.ok) {
      if (parsed.refusal.ownSource) deps.refusals?.ownSource();
      return reply.code(parsed.refusal.status).send(parsed.refusal.body);
    }
    const outcome = await deps.ingress.ingest(parsed.wires);
    if (outcome.status === 'conflict') return reply.code(errorStatus('conflict')).send(errorBody('conflict', `line ${outcome.index + 1}: ${outcome.reason}`));
    if (outcome.status === 'refused')
      return reply
        .code(errorStatus('unavailable'))
        .send(errorBody('unavailable', 'the event log cannot take events now; nothing of this batch was recorded', { reason: outcome.reason }));
    return reply.code(202).send({ accepted: outcome.accepted, duplicates: outcome.duplicates });
  };
}
