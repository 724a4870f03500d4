import Fastify from 'fastify';
import type { DaemonConfig } from '../config/config.js';
import type { ConfigError } from '../config/read-env.js';
import type { Logger } from '../core/logger.js';
import { httpRefusal } from '../core/errors.js';
import { RequestGuard } from '../transport/request-guard.js';

/** What a refused daemon still serves: its TCP port, to say why on every route. */
export interface RefusedDaemon {
  readonly url: string;
  close(): Promise<void>;
}

/**
 * A start refused by what the daemon found on disk (a directory of another
 * user, an unreadable hook token) leaves a container in a restart loop whose
 * only trace is a log line. With AEP_START_REFUSED=serve the process stays up
 * on its TCP port instead and answers every request 503 `start-refused`, with
 * the same problems as its log: `/healthz` says why (a supervisor's probe sees
 * 503), and a hook is refused before its body is read, so the shim spools it
 * for the start that follows the fix. Host and Origin are checked as by the
 * real daemon; no token is needed (the answer names settings and paths only,
 * never content or a credential).
 */
export async function serveRefusal(config: DaemonConfig & { port: number }, refusal: ConfigError, log: Logger): Promise<RefusedDaemon> {
  const app = Fastify({ logger: false, bodyLimit: 1, return503OnClosing: true });
  const guard = new RequestGuard({ boundHost: config.host, allowedHosts: config.allowedHosts });
  const answer = httpRefusal('start-refused', undefined, { status: 'refused', problems: refusal.problems });
  app.addHook('onRequest', guard.onRequest);
  app.addHook('onRequest', async (_req, reply) => reply.code(answer.status).send(answer.body));
  // never reached (every request is answered above); routes so that fastify's router accepts every path and method
  app.all('/*', async () => undefined);
  app.all('/', async () => undefined);
  const url = await app.listen({ host: config.host, port: config.port });
  log.error('refused to start; serving 503 start-refused until restarted (AEP_START_REFUSED=serve)', { url });
  return { url, close: () => app.close() };
}
