import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { httpRefusal } from '../core/errors.js';

/** How a request reached the daemon: its private Unix socket, or TCP (compose). */
export type Transport = 'unix' | 'tcp';

const TRANSPORT = Symbol('hermes-aep.transport');

/** Set by the listener that accepted the request (listeners.ts). */
export function tagTransport(req: IncomingMessage, t: Transport): void {
  (req as IncomingMessage & { [TRANSPORT]?: Transport })[TRANSPORT] = t;
}

export function transportOf(req: IncomingMessage): Transport | undefined {
  return (req as IncomingMessage & { [TRANSPORT]?: Transport })[TRANSPORT];
}

/** Names every local client uses; the port is not part of the check. */
const LOCAL_NAMES = ['localhost', '127.0.0.1', '::1'];
/** Wildcard bind addresses are not names anyone should be reached by (a browser maps 0.0.0.0 to this machine). */
const UNSPECIFIED = new Set(['0.0.0.0', '::', '']);

/** The host name in a Host header (`name`, `name:port`, `[v6]`, `[v6]:port`), lower-cased; undefined when malformed. */
export function hostName(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const h = header.trim().toLowerCase();
  let name: string;
  let rest: string;
  if (h.startsWith('[')) {
    const close = h.indexOf(']');
    if (close < 0) return undefined;
    name = h.slice(1, close);
    rest = h.slice(close + 1);
  } else {
    const colon = h.lastIndexOf(':');
    name = colon < 0 ? h : h.slice(0, colon);
    rest = colon < 0 ? '' : h.slice(colon);
    if (name.includes(':')) return undefined;
  }
  if (name === '' || (rest !== '' && !/^:\d{1,5}$/.test(rest))) return undefined;
  return name;
}

/** A bare name from a setting or a bind address (brackets and case removed). */
const normalizeName = (s: string) =>
  s
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1');

export interface GuardOptions {
  /** the address the TCP listener is bound to (allowed as a Host unless it is a wildcard) */
  readonly boundHost?: string;
  /** AEP_ALLOWED_HOSTS: further host names accepted in Host */
  readonly allowedHosts?: readonly string[];
  /**
   * The hook token. When set, every request that did not come over the Unix
   * socket must carry `Authorization: Bearer <token>`, except `GET /healthz`
   * and `POST /webhook` (Hermes's outbound webhooks cannot send it: their
   * HMAC signature is that route's authentication, checked by the route).
   */
  readonly token?: string;
  /**
   * AEP_UI on: the live view's paths (`/ui`, `/ui/...`) check their own
   * token (none for the page's files, the stream's read rule for
   * `/ui/state`, AEP_TOKEN for `/ui/command`), and its own page's Origin
   * (exactly `http://<Host>`) is let through on them: GET and HEAD, and
   * `POST /ui/command`. Every other Origin is refused there as anywhere.
   */
  readonly ui?: boolean;
}

/**
 * The AEP stream's paths (AEP-0003 §3): their token and Origin rules are the
 * stream's own (StreamAuth, AEP_TOKEN); the guard checks only their Host.
 */
export const STREAM_PATHS: ReadonlySet<string> = new Set(['/events', '/.well-known/aep', '/stream', '/socket']);

/** The live view's paths (src/ui-server/): the page at `/ui`, its files under it, `/ui/state`, `/ui/command`. */
export const UI_PATH = '/ui';
export const UI_COMMAND_PATH = '/ui/command';

/** A request path without its query. */
const pathOf = (url: string | undefined): string => {
  const u = url ?? '/';
  const q = u.indexOf('?');
  return q < 0 ? u : u.slice(0, q);
};

/** `/ui` or anything under `/ui/`. */
export const isUiPath = (url: string | undefined): boolean => {
  const p = pathOf(url);
  return p === UI_PATH || p.startsWith(`${UI_PATH}/`);
};

/**
 * Whether an Origin header is exactly this daemon's own origin for the
 * request's Host (`http://<Host>`, as a browser sends it for a page it
 * loaded from that Host): the live view's page, never another's.
 */
export function sameOrigin(origin: string | undefined, hostHeader: string | undefined): boolean {
  if (origin === undefined || hostHeader === undefined || hostName(hostHeader) === undefined) return false;
  return origin.trim().toLowerCase() === `http://${hostHeader.trim().toLowerCase()}`;
}

/** Hermes's outbound webhooks: signed by HMAC (daemon/webhook-route.ts), so the hook token is not asked for there. */
export const WEBHOOK_PATH = '/webhook';

const REFUSE_HOST = httpRefusal('forbidden-host');
const REFUSE_ORIGIN = httpRefusal('forbidden-origin');
const REFUSE_TOKEN = httpRefusal('unauthorized', 'over TCP this needs Authorization: Bearer <the hook token>');

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/**
 * The first gate of every request, before its body is read: a DNS-rebinding
 * page (a foreign name in Host) or any page at all (an Origin header) is
 * refused 403; over TCP, a request without the hook token is refused 401.
 * Replies carry fixed reasons only.
 */
export class RequestGuard {
  readonly refused = { host: 0, origin: 0, token: 0 };
  private readonly allowed: ReadonlySet<string>;
  private readonly tokenDigest: Buffer | undefined;
  private readonly ui: boolean;

  constructor(o: GuardOptions = {}) {
    const names = [...LOCAL_NAMES, ...(o.allowedHosts ?? []).map(normalizeName)];
    const bound = o.boundHost === undefined ? '' : normalizeName(o.boundHost);
    if (!UNSPECIFIED.has(bound)) names.push(bound);
    this.allowed = new Set(names.filter((n) => n !== ''));
    this.tokenDigest = o.token === undefined ? undefined : sha256(o.token);
    this.ui = o.ui ?? false;
  }

  /** Whether a Host header names this daemon (DNS-rebinding defence); public for the WebSocket upgrade path. */
  hostAllowed(hostHeader: string | undefined): boolean {
    const name = hostName(hostHeader);
    return name !== undefined && this.allowed.has(name);
  }

  /** A stream route: its token and Origin rules are checked by the route (AEP-0003 §8.1), not here. */
  private isStreamPath(url: string | undefined): boolean {
    return STREAM_PATHS.has(pathOf(url));
  }

  /** The one exception to "no Origin": the live view's own page reading its files and state, or sending an answer. */
  private ownPage(req: FastifyRequest): boolean {
    if (!sameOrigin(req.headers.origin, req.headers.host)) return false;
    if (req.method === 'GET' || req.method === 'HEAD') return true;
    return req.method === 'POST' && pathOf(req.raw.url) === UI_COMMAND_PATH;
  }

  /** Constant time in the token's content (both sides are hashed to one length first). */
  private tokenMatches(header: string | undefined): boolean {
    if (!this.tokenDigest) return true;
    const m = /^Bearer[ ]+(\S+)[ ]*$/i.exec(header ?? '');
    return timingSafeEqual(sha256(m?.[1] ?? ''), this.tokenDigest) && m !== null;
  }

  readonly onRequest = async (req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    const stream = this.isStreamPath(req.raw.url);
    const ui = this.ui && isUiPath(req.raw.url);
    if (req.headers.origin !== undefined && !stream && !(ui && this.ownPage(req))) {
      this.refused.origin++;
      return reply.code(REFUSE_ORIGIN.status).send(REFUSE_ORIGIN.body);
    }
    if (!this.hostAllowed(req.headers.host)) {
      this.refused.host++;
      return reply.code(REFUSE_HOST.status).send(REFUSE_HOST.body);
    }
    // the stream's and the live view's routes check their own tokens
    if (stream || ui) return undefined;
    const health = (req.method === 'GET' || req.method === 'HEAD') && req.routeOptions.url === '/healthz';
    const webhook = req.method === 'POST' && req.routeOptions.url === WEBHOOK_PATH;
    if (this.tokenDigest && transportOf(req.raw) !== 'unix' && !health && !webhook && !this.tokenMatches(req.headers.authorization)) {
      this.refused.token++;
      return reply.code(REFUSE_TOKEN.status).header('www-authenticate', 'Bearer').send(REFUSE_TOKEN.body);
    }
    return undefined;
  };

  stats(): { refused: { host: number; origin: number; token: number } } {
    return { refused: { ...this.refused } };
  }
}
