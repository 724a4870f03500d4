import { chmod } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { tagTransport, type Transport } from './request-guard.js';

export interface ListenPlan {
  /** the Unix socket to listen on (prepared by prepareSocketPath) */
  readonly socket?: string;
  /** TCP, only when configured */
  readonly tcp?: { readonly host: string; readonly port: number };
}

export interface Listening {
  readonly socket?: string;
  /** `http://host:port` of the TCP listener */
  readonly url?: string;
  /** stop accepting, let requests in flight finish (up to `graceMs`), then drop what is left */
  close(graceMs?: number): Promise<void>;
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
/** An HTTP upgrade request (the `/socket` WebSocket binding); it owns `socket` from then on. */
export type UpgradeHandler = (req: IncomingMessage, socket: Duplex, head: Buffer) => void;

/** Upgraded sockets leave the server's HTTP connection tracking: each server keeps its own, to drop at close. */
const upgraded = new WeakMap<Server, Set<Duplex>>();

function serve(handler: Handler, transport: Transport, upgrade?: UpgradeHandler): Server {
  const server = createServer((req, res) => {
    tagTransport(req, transport);
    handler(req, res);
  });
  if (upgrade) {
    const live = new Set<Duplex>();
    upgraded.set(server, live);
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      tagTransport(req, transport);
      live.add(socket);
      socket.once('close', () => live.delete(socket));
      upgrade(req, socket, head);
    });
  }
  return server;
}

function listenOn(server: Server, opts: { path: string } | { host: string; port: number }): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

function closeServer(server: Server, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      server.closeAllConnections();
      for (const s of upgraded.get(server) ?? []) s.destroy();
    }, graceMs);
    timer.unref();
    server.close(() => {
      clearTimeout(timer);
      resolve();
    });
    server.closeIdleConnections();
  });
}

/**
 * Open the daemon's listeners around one request handler (fastify's
 * `routing`): the Unix socket, created owner-only (bound under umask 077 so
 * no other user can connect even for an instant, then chmod 0600), and TCP
 * when configured. Each request is tagged with the listener it came from,
 * upgrade requests too (passed to `upgrade` when given).
 */
export async function openListeners(handler: Handler, plan: ListenPlan, upgrade?: UpgradeHandler): Promise<Listening> {
  const servers: Server[] = [];
  const closeAll = (graceMs = 3_000) => Promise.all(servers.map((s) => closeServer(s, graceMs))).then(() => undefined);
  try {
    let url: string | undefined;
    if (plan.socket) {
      const s = serve(handler, 'unix', upgrade);
      servers.push(s);
      // the bind itself happens synchronously inside listen(), under this mask
      const previous = process.umask(0o077);
      let bound: Promise<void>;
      try {
        bound = listenOn(s, { path: plan.socket });
      } finally {
        process.umask(previous);
      }
      await bound;
      await chmod(plan.socket, 0o600);
    }
    if (plan.tcp) {
      const s = serve(handler, 'tcp', upgrade);
      servers.push(s);
      await listenOn(s, plan.tcp);
      const port = (s.address() as AddressInfo).port;
      const host = plan.tcp.host;
      url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
    }
    return { ...(plan.socket ? { socket: plan.socket } : {}), ...(url ? { url } : {}), close: closeAll };
  } catch (err) {
    await closeAll(0);
    throw err;
  }
}
