/**
 * One client connection to the daemon's WebSocket binding (`/socket`,
 * AEP-0003 §3.5, §4): over the Unix socket (trusted by the daemon: no token)
 * or TCP with `Authorization: Bearer` (the token never appears in a URL nor
 * in any message this module produces). `hello` first as a consumer, the
 * collector's `hello` awaited (its `capabilities.control.ack_window_ms` is
 * kept), then subscriptions confirmed one by one (§6.5), the daemon's `ping`
 * frames answered, every other frame handed to the caller as received.
 */
import type WebSocket from 'ws';
import type { RawData } from 'ws';
import { loadWs } from '../util/lazy-modules.js';
import { clean } from '../tail/facts.js';
import type { StreamTarget } from '../tail/sse-client.js';

export type LinkFailure =
  /** nothing answered (no daemon, wrong port) */
  | { readonly kind: 'unreachable'; readonly code: string }
  /** the upgrade was refused with an HTTP status (401: no or wrong token) */
  | { readonly kind: 'http'; readonly status: number; readonly error: string; readonly message: string }
  /** the daemon answered `hello` (or a `subscribe`) with an `error` frame */
  | { readonly kind: 'refused'; readonly step: 'hello' | 'subscribe'; readonly code: string; readonly detail?: string }
  /** the connection went away after it was open */
  | { readonly kind: 'dropped' }
  | { readonly kind: 'timeout'; readonly step: 'connect' | 'hello' | 'subscribe' };

export class LinkError extends Error {
  constructor(readonly failure: LinkFailure) {
    super(failure.kind);
  }
}

/** The default ack window when the collector's hello declares none (AEP-0004 §3). */
export const DEFAULT_ACK_WINDOW_MS = 10_000;

export interface LinkOptions {
  /** `identity.instance` of the hello (the host name) */
  readonly instance: string;
  readonly agent: string;
  /** connect + hello, and each subscribe, must complete within this (default 10 s) */
  readonly stepMs?: number;
}

export interface Link {
  /** the collector's `capabilities.control.ack_window_ms`, else the default */
  readonly ackWindowMs: number;
  /** subscribe and wait for `subscribed` (rejects with a LinkError) */
  subscribe(id: string, spec: Readonly<Record<string, unknown>>): Promise<void>;
  send(text: string): void;
  /** every text frame after the hello exchange, as received */
  onFrame(cb: (text: string) => void): void;
  /** settles when the connection closes, whoever closed it */
  readonly closed: Promise<void>;
  close(): void;
}

/** The `/socket` URL of a stream target: `ws+unix:` for the socket, `ws(s)://…/socket` for TCP. */
export function socketUrl(t: StreamTarget): string {
  if (t.kind === 'socket') return `ws+unix:${t.path}:/socket`;
  const u = new URL(t.url.href);
  u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:';
  u.pathname = u.pathname.replace(/\/stream$/, '') + '/socket';
  return u.href;
}

const textOf = (d: RawData): string => (Buffer.isBuffer(d) ? d : Array.isArray(d) ? Buffer.concat(d) : Buffer.from(d)).toString('utf8');

function parse(text: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

const short = (v: unknown, max: number) => (typeof v === 'string' && v !== '' ? clean(v, max) : undefined);

function ackWindowOf(hello: Record<string, unknown>): number {
  const caps = hello['capabilities'];
  const control = typeof caps === 'object' && caps !== null ? (caps as Record<string, unknown>)['control'] : undefined;
  const w = typeof control === 'object' && control !== null ? (control as Record<string, unknown>)['ack_window_ms'] : undefined;
  return typeof w === 'number' && Number.isSafeInteger(w) && w > 0 && w <= 600_000 ? w : DEFAULT_ACK_WINDOW_MS;
}

/** An HTTP refusal's body: `{error, detail}` as the daemon writes it (core/errors.ts; `message` from an older daemon); fixed reasons, never the credential. */
function httpFailure(status: number, body: string): LinkFailure {
  const j = parse(body) ?? {};
  return { kind: 'http', status, error: short(j['error'], 60) ?? `http-${status}`, message: short(j['detail'], 300) ?? short(j['message'], 300) ?? '' };
}

/** Connect and complete the hello exchange; rejects with a LinkError. */
export function openLink(target: StreamTarget, o: LinkOptions): Promise<Link> {
  const stepMs = o.stepMs ?? 10_000;
  const headers: Record<string, string> = target.kind === 'socket' ? { host: 'localhost' } : {};
  if (target.kind === 'url' && target.token !== undefined) headers['authorization'] = `Bearer ${target.token}`;
  const ws: WebSocket = new (loadWs().WebSocket)(socketUrl(target), { headers, handshakeTimeout: stepMs, perMessageDeflate: false, followRedirects: false });
  const closed = new Promise<void>((resolve) => ws.once('close', () => resolve()));
  const listeners = new Set<(text: string) => void>();
  const waiting = new Map<string, { resolve: () => void; reject: (e: LinkError) => void }>();
  let open = false;

  const link = (ackWindowMs: number): Link => ({
    ackWindowMs,
    closed,
    send: (text) => ws.send(text),
    onFrame: (cb) => void listeners.add(cb),
    close: () => {
      if (ws.readyState === ws.CONNECTING || ws.readyState === ws.OPEN) ws.close(1000, 'done');
      setTimeout(() => ws.terminate(), 1_000).unref();
    },
    subscribe: (id, spec) =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiting.delete(id);
          reject(new LinkError({ kind: 'timeout', step: 'subscribe' }));
        }, stepMs);
        const settle =
          <A extends unknown[]>(f: (...a: A) => void) =>
          (...a: A) => {
            clearTimeout(timer);
            waiting.delete(id);
            f(...a);
          };
        waiting.set(id, { resolve: settle(resolve), reject: settle(reject) });
        ws.send(JSON.stringify({ type: 'subscribe', id, ...spec }));
      }),
  });

  return new Promise<Link>((resolve, reject) => {
    let settled = false;
    const fail = (f: LinkFailure) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      reject(new LinkError(f));
      ws.terminate();
    };
    const timer = setTimeout(() => fail({ kind: 'timeout', step: open ? 'hello' : 'connect' }), stepMs);
    ws.on('unexpected-response', (_req, res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        if (size < 8192) chunks.push(c);
        size += c.length;
      });
      const done = () => fail(httpFailure(res.statusCode ?? 0, Buffer.concat(chunks).toString('utf8').slice(0, 8192)));
      res.on('end', done);
      res.on('error', done);
    });
    ws.on('error', (err: NodeJS.ErrnoException) => fail(open ? { kind: 'dropped' } : { kind: 'unreachable', code: err.code ?? 'error' }));
    ws.on('open', () => {
      open = true;
      ws.send(JSON.stringify({ type: 'hello', versions: ['0.1'], role: 'consumer', identity: { agent: o.agent, instance: o.instance } }));
    });
    ws.on('close', () => {
      fail(open ? { kind: 'dropped' } : { kind: 'unreachable', code: 'ECONNRESET' });
      for (const w of [...waiting.values()]) w.reject(new LinkError({ kind: 'dropped' }));
    });
    ws.on('message', (data, isBinary) => {
      if (isBinary) return;
      const text = textOf(data);
      const f = parse(text);
      const type = f?.['type'];
      if (!settled) {
        if (type === 'hello') {
          const versions = f?.['versions'];
          if (!Array.isArray(versions) || versions.length !== 1 || versions[0] !== '0.1')
            return fail({ kind: 'refused', step: 'hello', code: 'version-unsupported' });
          settled = true;
          clearTimeout(timer);
          return resolve(link(ackWindowOf(f!)));
        }
        if (type === 'error') {
          const detail = short(f?.['detail'], 200);
          return fail({ kind: 'refused', step: 'hello', code: short(f?.['code'], 40) ?? 'error', ...(detail !== undefined ? { detail } : {}) });
        }
        return; // nothing else is expected before the hello
      }
      if (type === 'ping') return ws.send(JSON.stringify({ type: 'pong', ...(f?.['t'] !== undefined ? { t: f['t'] } : {}) }));
      const id = f?.['id'];
      if ((type === 'subscribed' || type === 'error') && typeof id === 'string' && waiting.has(id)) {
        const w = waiting.get(id)!;
        if (type === 'subscribed') return w.resolve();
        const detail = short(f?.['detail'], 200);
        return w.reject(
          new LinkError({ kind: 'refused', step: 'subscribe', code: short(f?.['code'], 40) ?? 'error', ...(detail !== undefined ? { detail } : {}) }),
        );
      }
      for (const cb of listeners) cb(text);
    });
  });
}
