import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { transportOf } from '../transport/request-guard.js';

/** What a request may do on the stream surface: authenticated (ingest, command) or watch only. */
export type StreamAccess = { readonly kind: 'authenticated' } | { readonly kind: 'watch'; readonly browser: boolean };

/** A refused request: an HTTP status and a fixed reason (never the credential, never the URL). */
export interface StreamRefusal {
  readonly status: 401 | 403;
  readonly body: { readonly error: string; readonly message: string };
}

export const isRefusal = (a: StreamAccess | StreamRefusal): a is StreamRefusal => 'status' in a;

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest();

const WRONG_TOKEN: StreamRefusal = {
  status: 401,
  body: { error: 'unauthorized', message: 'this stream needs Authorization: Bearer <AEP_TOKEN>' },
};
const WATCH_ONLY: StreamRefusal = {
  status: 401,
  body: { error: 'unauthorized', message: 'watch-only over TCP: set AEP_TOKEN on the daemon and present it to ingest or command' },
};
const ORIGIN: StreamRefusal = {
  status: 403,
  body: { error: 'forbidden_origin', message: 'requests made by web pages are refused unless their origin is in AEP_ALLOWED_ORIGINS (reading only)' },
};

/** The paths whose GET may carry the token as `?access_token=` (browser EventSource and WebSocket cannot set headers; AEP-0003 §8.1). */
const QUERY_TOKEN_PATHS = new Set(['/stream', '/socket']);

/**
 * Who may do what on the AEP stream (AEP-0003 §8, §11; AEP-0004 §4.1):
 * - over the Unix socket (owner-only): authenticated;
 * - over TCP with `AEP_TOKEN` set: the token is required for everything
 *   (`Authorization: Bearer`, or `?access_token=` on `/stream` and `/socket`),
 *   compared in constant time; a missing or wrong one is 401;
 * - over TCP without `AEP_TOKEN`: watch-only (read; ingest and commands 401);
 * - a request with an `Origin` (a web page) is refused 403 unless its origin
 *   is allowed AND it only reads.
 */
export class StreamAuth {
  readonly refused = { token: 0, origin: 0, watch_only: 0 };
  private readonly digest: Buffer | undefined;
  private readonly origins: ReadonlySet<string>;

  constructor(o: { readonly token?: string; readonly allowedOrigins: readonly string[] }) {
    this.digest = o.token === undefined ? undefined : sha256(o.token);
    this.origins = new Set(o.allowedOrigins);
  }

  check(req: IncomingMessage, need: 'read' | 'write'): StreamAccess | StreamRefusal {
    const origin = req.headers.origin;
    const browser = origin !== undefined;
    if (browser && (need === 'write' || !this.origins.has(origin))) {
      this.refused.origin++;
      return ORIGIN;
    }
    if (transportOf(req) === 'unix') return browser ? { kind: 'watch', browser } : { kind: 'authenticated' };
    const presented = this.credential(req);
    if (this.digest) {
      if (presented === undefined || !timingSafeEqual(sha256(presented), this.digest)) {
        this.refused.token++;
        return WRONG_TOKEN;
      }
      return browser ? { kind: 'watch', browser } : { kind: 'authenticated' };
    }
    if (need === 'write') {
      this.refused.watch_only++;
      return WATCH_ONLY;
    }
    return { kind: 'watch', browser };
  }

  /** The bearer token of the request: the header, or the query parameter where a browser cannot send one. */
  private credential(req: IncomingMessage): string | undefined {
    const m = /^Bearer[ ]+(\S+)[ ]*$/i.exec(req.headers.authorization ?? '');
    if (m) return m[1];
    if (req.method !== 'GET') return undefined;
    let u: URL;
    try {
      u = new URL(req.url ?? '/', 'http://localhost');
    } catch {
      return undefined;
    }
    return QUERY_TOKEN_PATHS.has(u.pathname) ? (u.searchParams.get('access_token') ?? undefined) : undefined;
  }

  stats(): { refused: { token: number; origin: number; watch_only: number } } {
    return { refused: { ...this.refused } };
  }
}
