import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpCall, startDaemonProcess, type DaemonProcess, type HttpReply } from '../../support/processes.js';

/**
 * README, Security posture: "the `access_token` query (for `EventSource`) is never logged, and no error quotes a URL".
 * The real daemon (a process, AEP_DEBUG on, AEP_TOKEN set so every route is live), asked over TCP and over its socket for
 * URLs whose path and query carry markers, wrong in every way a route can refuse them: neither a reply (status line
 * aside: body and headers) nor anything on the daemon's stderr may hold any marker.
 */
const MARK = 'Qz7mrk';
const AEP_TOKEN = 'url-test-token-0123456789';
const marker = (where: string) => `${MARK}${where}`;
const ALL = new RegExp(`${MARK}[A-Za-z]*`, 'g');

const REQUESTS: { method: string; path: string; body?: string; headers?: Record<string, string> }[] = [
  { method: 'GET', path: `/nope/${marker('path')}?x=${marker('query')}` },
  { method: 'GET', path: `/stream?access_token=${marker('token')}&filter=${marker('filter')}` },
  { method: 'GET', path: `/stream?live=0&filter=%7B${marker('filterjson')}` },
  { method: 'GET', path: `/stream?live=0&from=${marker('from')}` },
  { method: 'GET', path: `/stream?live=0&capture=${marker('capture')}` },
  { method: 'GET', path: `/socket?access_token=${marker('sockettoken')}` },
  { method: 'GET', path: `/healthz?${marker('health')}` },
  { method: 'POST', path: `/hook?${marker('hook')}`, body: '{"hook_event_name":', headers: { 'content-type': 'application/json' } },
  { method: 'POST', path: `/hook/${marker('hookpath')}`, body: '{}', headers: { 'content-type': 'application/json' } },
  { method: 'POST', path: `/events?${marker('events')}`, body: 'not json', headers: { 'content-type': 'application/json', 'aep-version': '0.1' } },
  { method: 'PUT', path: `/events/${marker('eventspath')}?access_token=${marker('puttoken')}` },
  { method: 'GET', path: `/.well-known/aep?${marker('wellknown')}` },
  { method: 'GET', path: `/${marker('long')}${'x'.repeat(20_000)}` },
];

let daemon: DaemonProcess;
const replies: { via: string; req: string; reply: HttpReply }[] = [];

beforeAll(async () => {
  daemon = await startDaemonProcess({ AEP_DEBUG: 'true', AEP_TOKEN: AEP_TOKEN });
  for (const via of ['tcp', 'socket'] as const) {
    for (const r of REQUESTS) {
      const to = via === 'tcp' ? { url: daemon.url } : { socketPath: daemon.socketPath };
      // over TCP with the token each route needs (the stream's AEP_TOKEN, else the hook token), so the request gets past the
      // guard to the route's own refusal; a request carrying ?access_token gets no header
      const stream = /^\/(stream|socket|events|\.well-known)/.test(r.path);
      const auth = via === 'tcp' && !r.path.includes('access_token') ? (stream ? { authorization: `Bearer ${AEP_TOKEN}` } : daemon.authHeaders) : {};
      const headers = { ...auth, ...(r.headers ?? {}) };
      replies.push({
        via,
        req: `${r.method} ${r.path.slice(0, 80)}`,
        reply: await httpCall(to, { method: r.method, path: r.path, headers, ...(r.body ? { body: r.body } : {}) }),
      });
    }
  }
});
afterAll(async () => {
  await daemon?.stop();
});

describe('no error quotes a URL; the access_token query is never logged', () => {
  it('every request was refused or answered by the daemon (the markers reached its routes)', () => {
    expect(replies).toHaveLength(2 * REQUESTS.length);
    const refused = replies.filter((r) => r.reply.status >= 400);
    // all but /healthz (and the socket's well-known document) are refusals
    expect(refused.length).toBeGreaterThanOrEqual(2 * REQUESTS.length - 4);
  });

  it('no reply body or header holds a marker', () => {
    const quoted = replies.flatMap(({ via, req, reply }) =>
      [...`${JSON.stringify(reply.headers)}\n${reply.body}`.matchAll(ALL)].map((m) => `${via} ${req} → ${reply.status}: ${m[0]}`),
    );
    expect(quoted).toEqual([]);
  });

  it('nothing on the daemon’s stderr holds a marker', async () => {
    expect(await daemon.stop()).toBe(0);
    const err = daemon.stderr();
    expect(err).toContain('hermes-aep daemon listening');
    expect([...err.matchAll(ALL)].map((m) => m[0])).toEqual([]);
  });
});
