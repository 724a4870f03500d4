/**
 * Where the daemon's stream is, as every client command finds it (`tail`,
 * `answer`, `instruct`): `--url` (TCP, the token from `--token` or
 * `AEP_TOKEN`), `--socket`, else the daemon's Unix socket from the
 * environment (`AEP_SOCKET`, `{AEP_STATE_DIR}/hook.sock`), else TCP on
 * `AEP_HOST`/`AEP_PORT` when the socket is off. Errors name the option,
 * never a value (a URL or a token can be a secret).
 */
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import type { DaemonConfig } from '../config/config.js';
import type { StreamTarget } from './sse-client.js';

export interface TargetOptions {
  readonly url?: string;
  readonly socket?: string;
  readonly token?: string;
}

/** `--url` as the URL of `GET /stream`: `/stream` appended to a base, no query, no credentials. */
export function streamUrl(raw: string): URL {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new Error('--url takes the daemon URL, e.g. http://127.0.0.1:8393');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('--url takes an http:// or https:// URL');
  if (u.search !== '' || u.username !== '' || u.password !== '') {
    throw new Error('--url takes no query and no credentials (the token goes in --token or AEP_TOKEN)');
  }
  const p = u.pathname.replace(/\/+$/, '');
  u.pathname = p.endsWith('/stream') ? p : `${p}/stream`;
  u.hash = '';
  return u;
}

/** A loopback host name or address (the only place the local hook token is ever sent). */
function isLoopback(hostname: string): boolean {
  const h = hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (h === 'localhost' || h === '::1') return true;
  return isIP(h) === 4 && h.startsWith('127.');
}

/**
 * Without `--token` and `AEP_TOKEN`: the local daemon's hook token (its file,
 * when this user can read it), which the daemon accepts for READING the stream
 * over TCP. Sent to loopback only, never to another host.
 */
function hookTokenFor(url: URL, config: DaemonConfig): string | undefined {
  if (!isLoopback(url.hostname)) return undefined;
  try {
    const t = readFileSync(config.tokenFile, 'utf8').trim();
    return /^[0-9a-f]{64}$/.test(t) ? t : undefined;
  } catch {
    return undefined;
  }
}

function urlTarget(url: URL, token: string | undefined, config: DaemonConfig, reading: boolean): StreamTarget {
  const t = token ?? (reading ? hookTokenFor(url, config) : undefined);
  return { kind: 'url', url, ...(t !== undefined ? { token: t } : {}) };
}

/** `reading`: the client only reads (`tail`), so the local hook token may stand in for a missing AEP_TOKEN. */
export function streamTarget(o: TargetOptions, config: DaemonConfig, reading = true): StreamTarget {
  if (o.url !== undefined && o.socket !== undefined) throw new Error('--url and --socket: use one');
  const token = o.token ?? config.stream.token;
  if (o.url !== undefined) return urlTarget(streamUrl(o.url), token, config, reading);
  if (o.socket !== undefined) return { kind: 'socket', path: o.socket };
  if (config.socket !== undefined) return { kind: 'socket', path: config.socket };
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  return urlTarget(streamUrl(`http://${host}:${config.port ?? 0}`), token, config, reading);
}
