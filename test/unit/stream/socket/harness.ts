import { WebSocket } from 'ws';
import { createSocketEndpoint, type SocketEndpoint } from '../../../../src/stream/socket/endpoint.js';
import { openListeners, type Listening } from '../../../../src/transport/listeners.js';
import { waitFor } from '../../../support/processes.js';
import { compileFilter, FakeAuth, FakeHub, FakeIngress, parseFrom } from './fakes.js';

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined, debug: () => undefined };

export interface Rig {
  readonly hub: FakeHub;
  readonly ingress: FakeIngress;
  readonly auth: FakeAuth;
  readonly endpoint: SocketEndpoint;
  readonly listening: Listening;
  /** ws://127.0.0.1:port/socket */
  readonly url: string;
  close(): Promise<void>;
}

/** A real HTTP listener (the daemon's openListeners) with the endpoint on its upgrade path and the fakes behind it. */
export async function startRig(o: { token?: string; heartbeatMs?: number; socket?: string; ownSourcePrefix?: string } = {}): Promise<Rig> {
  const hub = new FakeHub();
  const ingress = new FakeIngress(hub);
  const auth = new FakeAuth(o.token);
  const endpoint = createSocketEndpoint({
    hub,
    ingress,
    auth,
    hostAllowed: (h) => h !== undefined && /^(127\.0\.0\.1|localhost)(:\d+)?$/.test(h),
    compileFilter,
    parseFrom,
    heartbeatMs: o.heartbeatMs ?? 60_000,
    identity: { agent: 'hermes', instance: 'test-host/1' },
    maxFrameBytes: 64 * 1024,
    ...(o.ownSourcePrefix ? { ownSourcePrefix: o.ownSourcePrefix } : {}),
    log: quiet,
  });
  const listening = await openListeners(
    (_req, res) => {
      res.statusCode = 404;
      res.end();
    },
    { tcp: { host: '127.0.0.1', port: 0 }, ...(o.socket ? { socket: o.socket } : {}) },
    (req, socket, head) => endpoint.handleUpgrade(req, socket, head),
  );
  const url = `${listening.url!.replace('http:', 'ws:')}/socket`;
  return {
    hub,
    ingress,
    auth,
    endpoint,
    listening,
    url,
    close: async () => {
      await endpoint.close('test over');
      await listening.close(100);
    },
  };
}

export type Got = Record<string, unknown> & { type?: string };

/** A `ws` client keeping every frame it receives (parsed and raw) and how it closed. */
export class Client {
  readonly got: Got[] = [];
  readonly raw: string[] = [];
  closed?: { code: number; reason: string };
  readonly ws: WebSocket;
  private readonly opened: Promise<void>;

  constructor(url: string, headers: Record<string, string> = {}) {
    this.ws = new WebSocket(url, { headers });
    this.opened = new Promise((resolve, reject) => {
      this.ws.once('open', () => resolve());
      this.ws.once('error', reject);
    });
    this.ws.on('message', (data) => {
      const text = (data as Buffer).toString('utf8');
      this.raw.push(text);
      this.got.push(JSON.parse(text) as Got);
    });
    this.ws.on('close', (code, reason) => (this.closed = { code, reason: String(reason) }));
  }

  static async open(url: string, hello?: Record<string, unknown>, headers: Record<string, string> = {}): Promise<Client> {
    const c = new Client(url, headers);
    await c.opened;
    if (hello) {
      c.send(hello);
      await c.next((f) => f.type === 'hello' || f.type === 'error');
    }
    return c;
  }

  send(frame: unknown): void {
    this.ws.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
  }

  next(pred: (f: Got) => boolean, what = 'a frame'): Promise<Got> {
    return waitFor(what, () => this.got.find(pred), 5_000);
  }

  whenClosed(): Promise<{ code: number; reason: string }> {
    return waitFor('the close', () => this.closed, 5_000);
  }

  /** a ping round trip: every frame sent before it has been handled */
  async sync(): Promise<void> {
    const t = Math.random();
    this.send({ type: 'ping', t });
    await this.next((f) => f.type === 'pong' && f['t'] === t, 'the pong');
  }

  close(): void {
    this.ws.close();
  }
}

export const hello = (role: string, extra: Record<string, unknown> = {}) => ({
  type: 'hello',
  versions: ['0.1'],
  role,
  identity: { agent: role === 'consumer' ? 'watcher' : 'peer-agent', instance: `${role}-1` },
  capabilities: {},
  ...extra,
});
