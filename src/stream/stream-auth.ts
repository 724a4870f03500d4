import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { transportOf } from '../transport/request-guard.js';
import { errorBody, type ErrorBody } from '../core/errors.js';

/** What a stream request may do: everything, or read only (no token configured and none offered). */
export type StreamAccess = { readonly kind: 'authenticated' } | { readonly kind: 'watch'; readonly browser: boolean };

export interface StreamRefusal {
  readonly status: 401 | 403;
  readonly body: ErrorBody;
}

export interface StreamAuthOptions {
  /** AEP_TOKEN: when set, every TCP stream request must present it */
  readonly token?: string;
  /**
   * Without AEP_TOKEN: the credential that may READ the stream over TCP (the
   * daemon passes its hook token: whoever holds it may already post hooks, so
   * reading adds nothing to what it grants). Never grants ingest or commands.
   */
  readonly readToken?: string;
  /** AEP_STREAM_READ=open: without AEP_TOKEN anyone on the host may read (watch-only), as before 0.2 */
  readonly openRead?: boolean;
  /** AEP_ALLOWED_ORIGINS: web origins that may read the stream (never write) */
  readonly allowedOrigins: readonly string[];
}

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/** Paths where a browser `EventSource`/`WebSocket` may carry the token in the query (AEP-0003 §8.1). */
const QUERY_TOKEN_PATHS = new Set(['/stream', '/socket']);

const NO_TOKEN = errorBody('unauthorized', 'this needs Authorization: Bearer <AEP_TOKEN>');
const WATCH_ONLY = errorBody('unauthorized', 'set AEP_TOKEN to ingest or command over TCP');
const READ_TOKEN = errorBody(
  'unauthorized',
  'reading the stream over TCP needs Authorization: Bearer <the hook token file> (or AEP_TOKEN; AEP_STREAM_READ=open lets anyone on the host read)',
);
const ORIGIN = errorBody('forbidden-origin', 'this web origin may not use the stream (AEP_ALLOWED_ORIGINS, read only)');

/** The Bearer credential of a request, from the header or (GET /stream, /socket) the `access_token` query; never logged. */
function credentialOf(req: IncomingMessage): string | undefined {
  const m = /^Bearer[ ]+(\S+)[ ]*$/i.exec(req.headers.authorization ?? '');
  if (m) return m[1];
  if (req.headers.authorization !== undefined) return '';
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  if (req.method !== 'GET' || !QUERY_TOKEN_PATHS.has(path) || q < 0) return undefined;
  const t = new URLSearchParams(url.slice(q + 1)).get('access_token');
  return t ?? undefined;
}

/** `offered` equals the credential whose digest is `digest` (constant time; an absent credential never matches). */
const matches = (offered: string | undefined, digest: Buffer): boolean => timingSafeEqual(sha256(offered ?? ''), digest) && offered !== undefined;

/**
 * Who may use the stream endpoints (AEP-0003 §8.1, §11): the Unix socket is
 * trusted; over TCP a bearer token (compared in constant time), or, with no
 * AEP_TOKEN configured, read-only watching for holders of the read token (the
 * hook token), or for anyone on the host with AEP_STREAM_READ=open. A web page (Origin header) may
 * only read, and only from an allowed origin.
 */
export class StreamAuth {
  private readonly digest: Buffer | undefined;
  private readonly readDigest: Buffer | undefined;
  private readonly openRead: boolean;
  private readonly origins: ReadonlySet<string>;

  constructor(o: StreamAuthOptions) {
    this.digest = o.token === undefined ? undefined : sha256(o.token);
    this.readDigest = o.readToken === undefined ? undefined : sha256(o.readToken);
    this.openRead = o.openRead ?? false;
    this.origins = new Set(o.allowedOrigins.map((s) => s.trim().toLowerCase().replace(/\/+$/, '')));
  }

  check(req: IncomingMessage, need: 'read' | 'write'): StreamAccess | StreamRefusal {
    const origin = req.headers.origin;
    const browser = origin !== undefined;
    if (browser && (need !== 'read' || !this.origins.has(origin.trim().toLowerCase()))) return { status: 403, body: ORIGIN };
    return this.credentials(req, need, browser);
  }

  /**
   * The token rule alone, for a route that has checked the request's Origin
   * itself (the live view's `/ui/state`: its own page, same origin).
   */
  credentials(req: IncomingMessage, need: 'read' | 'write', browser = false): StreamAccess | StreamRefusal {
    if (transportOf(req) === 'unix') return { kind: 'authenticated' };
    const offered = credentialOf(req);
    if (this.digest) return matches(offered, this.digest) ? { kind: 'authenticated' } : { status: 401, body: NO_TOKEN };
    if (need !== 'read') return { status: 401, body: WATCH_ONLY };
    if (this.openRead || (this.readDigest && matches(offered, this.readDigest))) return { kind: 'watch', browser };
    return { status: 401, body: READ_TOKEN };
  }
}

export const isRefusal = (a: StreamAccess | StreamRefusal): a is StreamRefusal => 'status' in a;
