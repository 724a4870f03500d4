import { ownSourceCheck } from '../own-source.js';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { WebSocketServer } from 'ws';
import { loadWs } from '../../util/lazy-modules.js';
import { ClaimRegistry } from './claims.js';
import { Connection, type SocketCounters } from './connection.js';
import type { SocketDeps } from './deps.js';
import { errorBody, errorStatus, type ErrorBody } from '../../core/errors.js';

export interface SocketEndpoint {
  /** an HTTP upgrade request from either listener (tagged with its transport first) */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** `closing` to every connection, then the close handshake (dropped after a grace period) */
  close(reason: string): Promise<void>;
  stats(): Record<string, number>;
}

export const SOCKET_PATH = '/socket';
/** How long `close` waits for peers to answer the close handshake before dropping them. */
const CLOSE_GRACE_MS = 2_000;

const STATUS_TEXT: Record<number, string> = { 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 503: 'Service Unavailable' };

/** Refuse an upgrade with a plain HTTP response (fixed reasons only: never the request's credential or URL). */
function refuse(socket: Duplex, status: number, body: ErrorBody): void {
  const json = JSON.stringify(body);
  socket.on('error', () => undefined);
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? 'Error'}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(json)}\r\nconnection: close\r\n\r\n${json}`,
  );
  setTimeout(() => socket.destroy(), 1_000).unref();
}

const pathOf = (url: string | undefined): string | undefined => {
  try {
    return new URL(url ?? '/', 'http://localhost').pathname;
  } catch {
    return undefined;
  }
};

/**
 * The WebSocket binding at `/socket` (AEP-0003 §3.5): the Host check and
 * the stream auth run before the upgrade, a refusal is a plain HTTP status;
 * each accepted connection then speaks the frame protocol (connection.ts).
 * One heartbeat timer pings every open connection.
 */
export function createSocketEndpoint(deps: SocketDeps): SocketEndpoint {
  // ws is loaded at the first upgrade, not at start (src/util/lazy-modules.ts)
  let server: WebSocketServer | undefined;
  const wssOf = (): WebSocketServer =>
    (server ??= new (loadWs().WebSocketServer)({ noServer: true, maxPayload: deps.maxFrameBytes, perMessageDeflate: false, clientTracking: false }));
  const conns = new Set<Connection>();
  const claims = new ClaimRegistry();
  const ownSource = deps.ownSourcePrefix ? ownSourceCheck(deps.ownSourcePrefix) : undefined;
  const counters: SocketCounters = {
    events_in: 0,
    events_invalid: 0,
    commands_forwarded: 0,
    commands_refused: 0,
    kicked: 0,
    heartbeat_timeouts: 0,
    read_pauses: 0,
  };
  const refused = { path: 0, host: 0, auth: 0 };
  let accepted = 0;
  let stopping = false;
  const heartbeat = setInterval(() => {
    for (const c of conns) c.tick();
  }, deps.heartbeatMs);
  heartbeat.unref();

  function handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    if (stopping) return refuse(socket, errorStatus('stopping'), errorBody('stopping'));
    if (pathOf(req.url) !== SOCKET_PATH) {
      refused.path += 1;
      return refuse(socket, errorStatus('not-found'), errorBody('not-found', 'WebSocket upgrades are served at /socket'));
    }
    if (!deps.hostAllowed(req.headers.host)) {
      refused.host += 1;
      return refuse(socket, errorStatus('forbidden-host'), errorBody('forbidden-host'));
    }
    const access = deps.auth.check(req, 'read');
    if ('status' in access) {
      refused.auth += 1;
      return refuse(socket, access.status, access.body);
    }
    wssOf().handleUpgrade(req, socket, head, (ws) => {
      if (stopping) {
        ws.close(1001, 'stopping');
        return;
      }
      accepted += 1;
      const c = new Connection(ws, access, { deps, claims, counters, ...(ownSource ? { ownSource } : {}) });
      conns.add(c);
      ws.on('close', () => conns.delete(c));
      deps.log.debug('socket connection opened', { auth: access.kind });
    });
  }

  async function close(reason: string): Promise<void> {
    stopping = true;
    clearInterval(heartbeat);
    const open = [...conns];
    for (const c of open) c.closeWith(reason, 1001);
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_GRACE_MS)));
    await Promise.race([Promise.all(open.map((c) => c.whenClosed)), grace]);
    clearTimeout(timer);
    for (const c of open) c.terminate();
    server?.close();
  }

  function stats(): Record<string, number> {
    let emitters = 0;
    let consumers = 0;
    for (const c of conns) {
      if (c.role === 'emitter' || c.role === 'both') emitters += 1;
      if (c.role === 'consumer' || c.role === 'both') consumers += 1;
    }
    return {
      connections: conns.size,
      emitters,
      consumers,
      claims: claims.size,
      accepted,
      refused_path: refused.path,
      refused_host: refused.host,
      refused_auth: refused.auth,
      ...counters,
    };
  }

  return { handleUpgrade, close, stats };
}
