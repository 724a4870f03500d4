import { WebSocketServer, type WebSocket } from 'ws';
import type { AddressInfo } from 'node:net';
import { wireOf, type WireEvent } from '../../../src/aep/wire.js';

/** A relay stand-in: records every frame per connection, answers `hello` (unless told to hold it), dedupes events on (source, id). */
export class FakeRelay {
  readonly wss: WebSocketServer;
  readonly conns: { ws: WebSocket; frames: Record<string, any>[]; auth: string | undefined }[] = [];
  /** events received, every copy */
  readonly events: Record<string, any>[] = [];
  holdHello = false;

  private constructor(wss: WebSocketServer) {
    this.wss = wss;
    wss.on('connection', (ws, req) => {
      const c = { ws, frames: [] as Record<string, any>[], auth: req.headers.authorization };
      this.conns.push(c);
      ws.on('message', (d) => {
        const f = JSON.parse((d as Buffer).toString('utf8')) as Record<string, any>;
        c.frames.push(f);
        if (String(f.type).includes('.')) this.events.push(f);
        else if (f.type === 'hello' && !this.holdHello) this.sayHello(ws);
      });
    });
  }

  static async start(): Promise<FakeRelay> {
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise<void>((r) => wss.once('listening', () => r()));
    return new FakeRelay(wss);
  }

  get url(): string {
    return `ws://127.0.0.1:${(this.wss.address() as AddressInfo).port}/socket`;
  }

  sayHello(ws: WebSocket): void {
    ws.send(JSON.stringify({ type: 'hello', versions: ['0.1'], role: 'collector', identity: { agent: 'relay' }, capabilities: {} }));
  }

  /** ids held once each, as a relay's admission dedupe would */
  deduped(): string[] {
    return [...new Set(this.events.map((e) => `${e.source}|${e.id}`))];
  }

  async close(): Promise<void> {
    for (const c of this.conns) c.ws.terminate();
    await new Promise<void>((r) => this.wss.close(() => r()));
  }
}

let n = 0;
/** one own event of `severity` */
export function ev(severity = 'info', session = 's1'): WireEvent {
  const e = {
    aep: '0.1',
    id: `e${++n}`,
    time: new Date(0).toISOString(),
    source: 'aep://h/agent/hermes/x',
    agent: 'hermes',
    session,
    seq: n,
    epoch: 1,
    type: 'tool.requested',
    severity,
    capture: 'metadata',
    data: {},
  };
  return wireOf(Object.freeze(e), JSON.stringify(e), 'own');
}
