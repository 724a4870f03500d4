/**
 * The SSE consumer of `GET /stream` (AEP-0003 §3.3) over the daemon's Unix
 * socket or TCP: one connection at a time, reconnecting with backoff when the
 * stream ends or breaks (a daemon restart), each time asking the caller where
 * to resume (`Last-Event-ID`, `from`). The token goes in the Authorization
 * header only, and never into a message this module produces.
 */
import { request as httpRequest, type ClientRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { clean } from './facts.js';
import { SseParser, type SseMessage } from './sse-parse.js';

export type StreamTarget = { readonly kind: 'socket'; readonly path: string } | { readonly kind: 'url'; readonly url: URL; readonly token?: string };

/** The query of one attempt: built again before every reconnect. */
export interface StreamQuery {
  readonly filter?: string;
  readonly capture?: string;
  /** JSON array of positions, or `all` */
  readonly from?: string;
  readonly lastEventId?: string;
  /** false: replay only (`live=0`), the server ends the stream after it */
  readonly live: boolean;
}

export interface StreamHandlers {
  message(m: SseMessage): void;
  comment(text: string): void;
  /** the connection is up (first time and after every reconnect) or went away */
  state(s: 'connected' | 'reconnecting'): void;
}

/** Why following ended. */
export type StreamEnd =
  | { readonly kind: 'unreachable'; readonly code: string }
  | { readonly kind: 'refused'; readonly status: number; readonly error: string; readonly message: string }
  | { readonly kind: 'ended' }
  | { readonly kind: 'aborted' };

export interface FollowOptions {
  readonly target: StreamTarget;
  readonly query: () => StreamQuery;
  readonly handlers: StreamHandlers;
  /** keep reconnecting after the stream ends (the default `tail`), or stop at the first end (`--no-follow`) */
  readonly follow: boolean;
  readonly signal: AbortSignal;
  /** no byte (event or `: ping`) for this long = a dead connection (default 90 s: the daemon pings every 15 s) */
  readonly idleMs?: number;
  readonly backoffMs?: { readonly min: number; readonly max: number };
}

/** Where the stream is, for messages: never the query (it may hold `access_token`) nor the token. */
export function describeTarget(t: StreamTarget): string {
  return t.kind === 'socket' ? `unix:${t.path}` : `${t.url.origin}${t.url.pathname}`;
}

/** The path and query of `GET /stream` for one attempt. */
export function streamPath(base: string, q: StreamQuery): string {
  const params = new URLSearchParams();
  if (q.filter !== undefined) params.set('filter', q.filter);
  if (q.capture !== undefined) params.set('capture', q.capture);
  if (q.from !== undefined) params.set('from', q.from);
  if (!q.live) params.set('live', '0');
  const qs = params.toString();
  return qs ? `${base}?${qs}` : base;
}

type Attempt = { readonly kind: 'open'; readonly res: IncomingMessage; readonly req: ClientRequest } | Exclude<StreamEnd, { kind: 'ended' | 'aborted' }>;

const MAX_ERROR_BODY = 8 * 1024;
const DEFAULT_IDLE_MS = 90_000;

function open(target: StreamTarget, q: StreamQuery, signal: AbortSignal, idleMs: number): Promise<Attempt> {
  const headers: Record<string, string> = { accept: 'text/event-stream', 'cache-control': 'no-cache' };
  if (q.lastEventId !== undefined) headers['last-event-id'] = q.lastEventId;
  let opts: RequestOptions;
  let send = httpRequest;
  if (target.kind === 'socket') {
    opts = { socketPath: target.path, path: streamPath('/stream', q), headers };
  } else {
    if (target.token !== undefined) headers['authorization'] = `Bearer ${target.token}`;
    const u = target.url;
    opts = { host: u.hostname.replace(/^\[(.*)\]$/, '$1'), port: u.port || undefined, path: streamPath(u.pathname, q), headers };
    if (u.protocol === 'https:') send = httpsRequest;
  }
  return new Promise((resolve) => {
    const req = send({ ...opts, method: 'GET', agent: false, signal }, (res) => {
      const type = String(res.headers['content-type'] ?? '');
      if (res.statusCode === 200 && type.startsWith('text/event-stream')) return resolve({ kind: 'open', res, req });
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        if (size < MAX_ERROR_BODY) chunks.push(c);
        size += c.length;
      });
      const done = () => resolve(refusal(res.statusCode ?? 0, Buffer.concat(chunks).toString('utf8').slice(0, MAX_ERROR_BODY)));
      res.on('end', done);
      res.on('error', done);
    });
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ kind: 'unreachable', code: err.code ?? err.name }));
    // a peer that accepts and never answers (or goes quiet later) is as good as gone
    req.setTimeout(idleMs, () => req.destroy(Object.assign(new Error('no answer'), { code: 'ETIMEDOUT' })));
    req.end();
  });
}

function refusal(status: number, body: string): Attempt {
  let error = `http-${status}`;
  let message = '';
  try {
    const j = JSON.parse(body) as { error?: unknown; message?: unknown; detail?: unknown };
    if (typeof j.error === 'string') error = clean(j.error, 60);
    const m = typeof j.detail === 'string' ? j.detail : typeof j.message === 'string' ? j.message : '';
    message = clean(m, 300);
  } catch {
    /* not JSON: the status says it */
  }
  return { kind: 'refused', status, error, message };
}

/** Read one open stream to its end; resolves when it ends, breaks, idles out or the signal fires. */
function pump(res: IncomingMessage, req: ClientRequest, o: FollowOptions): Promise<void> {
  const parser = new SseParser({ message: (m) => o.handlers.message(m), comment: (c) => o.handlers.comment(c) });
  res.setEncoding('utf8');
  return new Promise((resolve) => {
    const idleMs = o.idleMs ?? DEFAULT_IDLE_MS;
    let timer = setTimeout(() => req.destroy(), idleMs);
    const finish = () => {
      clearTimeout(timer);
      resolve();
    };
    res.on('data', (chunk: string) => {
      timer.refresh();
      parser.push(chunk);
    });
    res.on('end', finish);
    res.on('error', finish);
    res.on('close', finish);
    req.on('error', finish);
    timer = timer.unref();
  });
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });

/**
 * Follow the stream: the first attempt's failure is returned as is (no daemon
 * answers: the caller reads the history instead; a refusal: the caller says
 * why). Once connected, an end, a break or a 5xx reconnects with jittered backoff
 * while `follow` holds, until the signal fires.
 */
export async function followStream(o: FollowOptions): Promise<StreamEnd> {
  const { min, max } = o.backoffMs ?? { min: 250, max: 5_000 };
  let connectedOnce = false;
  let delay = min;
  for (;;) {
    if (o.signal.aborted) return { kind: 'aborted' };
    const a = await open(o.target, o.query(), o.signal, o.idleMs ?? DEFAULT_IDLE_MS);
    if (o.signal.aborted) return { kind: 'aborted' };
    if (a.kind === 'open') {
      connectedOnce = true;
      delay = min;
      o.handlers.state('connected');
      await pump(a.res, a.req, o);
      if (o.signal.aborted) return { kind: 'aborted' };
      if (!o.follow) return { kind: 'ended' };
      o.handlers.state('reconnecting');
    } else if (!connectedOnce || (a.kind === 'refused' && a.status < 500)) {
      return a;
    }
    await sleep(Math.round(delay * (0.5 + Math.random() / 2)), o.signal);
    delay = Math.min(max, delay * 2);
  }
}
