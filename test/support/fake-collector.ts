import { rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { WebSocketServer, type WebSocket } from 'ws';
import { tempDir } from './processes.js';

/** One connection as the collector saw it: the upgrade's headers and every frame, raw and parsed, in order. */
export interface Conn {
  readonly ws: WebSocket;
  readonly headers: IncomingMessage['headers'];
  readonly raw: string[];
  readonly frames: Record<string, any>[];
}

export interface CommandCtx {
  readonly conn: Conn;
  /** the command exactly as received */
  readonly text: string;
  readonly command: Record<string, any>;
  /** 1 for the first command received over all connections, 2 for the next… */
  readonly n: number;
  /** send an event frame on this connection */
  event(type: string, over: Record<string, unknown>): string;
}

let seq = 0;

/**
 * A collector stand-in speaking the WebSocket binding the way the daemon does (hello as `collector` with
 * `capabilities.control`, `subscribe` → `subscribed`, `ping`), plus a replay-only `GET /stream` over
 * `held` events for the card lookup. What it does with a command is the test's `onCommand`.
 */
export class FakeCollector {
  readonly conns: Conn[] = [];
  readonly commands: string[] = [];
  readonly streamRequests: IncomingMessage[] = [];
  /** events a `GET /stream?from=all&live=0` replays (the filter's `type` and `id` applied) */
  held: Record<string, unknown>[] = [];
  ackWindowMs: number | undefined = 10_000;
  /** reject the upgrade with this status unless the bearer matches (TCP only) */
  token: string | undefined;
  onCommand: (c: CommandCtx) => void = () => undefined;
  private readonly wss = new WebSocketServer({ noServer: true });

  private constructor(
    private readonly server: Server,
    readonly where: { readonly kind: 'socket'; readonly path: string } | { readonly kind: 'url'; readonly url: string },
  ) {
    server.on('request', (req, res) => this.stream(req, res));
    server.on('upgrade', (req, socket, head) => {
      if (this.token !== undefined && req.headers.authorization !== `Bearer ${this.token}`) {
        socket.end('HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n{"error":"unauthorized","detail":"token please"}');
        return;
      }
      this.wss.handleUpgrade(req, socket, head, (ws) => this.accept(ws, req));
    });
  }

  static async start(on: 'tcp' | 'socket' = 'tcp', at?: string): Promise<FakeCollector> {
    const server = createServer();
    if (on === 'socket') {
      const p = at ?? path.join(tempDir('hermes-aep-fake-collector-'), 's.sock');
      rmSync(p, { force: true });
      await new Promise<void>((r) => server.listen(p, r));
      return new FakeCollector(server, { kind: 'socket', path: p });
    }
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return new FakeCollector(server, { kind: 'url', url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
  }

  private stream(req: IncomingMessage, res: ServerResponse): void {
    this.streamRequests.push(req);
    const u = new URL(req.url ?? '/', 'http://x');
    if (u.pathname !== '/stream') {
      res.statusCode = 404;
      return void res.end();
    }
    if (this.token !== undefined && req.headers.authorization !== `Bearer ${this.token}`) {
      res.writeHead(401, { 'content-type': 'application/json' });
      return void res.end('{"error":"unauthorized","detail":"token please"}');
    }
    const filter = JSON.parse(u.searchParams.get('filter') ?? '{}') as Record<string, unknown>;
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const e of this.held) {
      if (Object.entries(filter).every(([k, v]) => e[k] === v)) res.write(`event: ${String(e['type'])}\ndata: ${JSON.stringify(e)}\n\n`);
    }
    res.end(); // live=0: the replay is all
  }

  private accept(ws: WebSocket, req: IncomingMessage): void {
    const conn: Conn = { ws, headers: req.headers, raw: [], frames: [] };
    this.conns.push(conn);
    ws.on('message', (data) => {
      const text = (data as Buffer).toString('utf8');
      const f = JSON.parse(text) as Record<string, any>;
      conn.raw.push(text);
      conn.frames.push(f);
      if (f.type === 'hello') {
        const control = this.ackWindowMs !== undefined ? { control: { accepts: [], ack_window_ms: this.ackWindowMs } } : {};
        ws.send(JSON.stringify({ type: 'hello', versions: ['0.1'], role: 'collector', identity: { agent: 'fake' }, capabilities: control }));
      } else if (f.type === 'subscribe') {
        ws.send(JSON.stringify({ type: 'subscribed', id: f.id }));
      } else if (String(f.type).includes('.')) {
        this.commands.push(text);
        const n = this.commands.length;
        this.onCommand({
          conn,
          text,
          command: f,
          n,
          event: (type, over) => {
            const e = {
              aep: '0.1',
              id: `ev${++seq}`,
              type,
              time: new Date().toISOString(),
              source: 'aep://h/agent/hermes/session/x',
              agent: 'hermes',
              session: f.session,
              seq,
              ...over,
            };
            const line = JSON.stringify(e);
            ws.send(line);
            return line;
          },
        });
      }
    });
  }

  async close(): Promise<void> {
    for (const c of this.conns) c.ws.terminate();
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}
