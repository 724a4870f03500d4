import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { StreamAuth } from '../../../../src/stream/stream-auth.js';
import { tagTransport } from '../../../../src/transport/request-guard.js';

const TOKEN = 'f0'.repeat(32);
const req = (o: { url?: string; method?: string; headers?: Record<string, string>; unix?: boolean }): IncomingMessage => {
  const r = { url: o.url ?? '/stream', method: o.method ?? 'GET', headers: o.headers ?? {} } as unknown as IncomingMessage;
  tagTransport(r, o.unix ? 'unix' : 'tcp');
  return r;
};

describe('StreamAuth (AEP-0003 §8.1)', () => {
  const withToken = new StreamAuth({ token: TOKEN, allowedOrigins: ['https://dash.example/'] });
  const open = new StreamAuth({ allowedOrigins: [], openRead: true });
  const HOOK_TOKEN = 'ab'.repeat(32);
  const byDefault = new StreamAuth({ allowedOrigins: [], readToken: HOOK_TOKEN });

  it('the Unix socket is trusted for reading and writing', () => {
    expect(withToken.check(req({ unix: true }), 'write')).toEqual({ kind: 'authenticated' });
    expect(open.check(req({ unix: true, method: 'POST', url: '/events' }), 'write')).toEqual({ kind: 'authenticated' });
  });

  it('with a token: the Bearer header, or ?access_token only on GET /stream and /socket', () => {
    expect(withToken.check(req({ headers: { authorization: `Bearer ${TOKEN}` } }), 'write')).toEqual({ kind: 'authenticated' });
    expect(withToken.check(req({ url: `/stream?live=0&access_token=${TOKEN}` }), 'read')).toEqual({ kind: 'authenticated' });
    expect(withToken.check(req({ url: `/socket?access_token=${TOKEN}` }), 'read')).toEqual({ kind: 'authenticated' });
    expect(withToken.check(req({ url: `/events?access_token=${TOKEN}` }), 'read')).toMatchObject({ status: 401 });
    expect(withToken.check(req({ method: 'POST', url: `/stream?access_token=${TOKEN}` }), 'read')).toMatchObject({ status: 401 });
    expect(withToken.check(req({ headers: { authorization: `Bearer ${TOKEN}x` } }), 'read')).toMatchObject({ status: 401 });
    expect(withToken.check(req({ headers: { authorization: `Basic ${TOKEN}` }, url: `/stream?access_token=${TOKEN}` }), 'read')).toMatchObject({
      status: 401,
    });
    expect(withToken.check(req({}), 'read')).toMatchObject({ status: 401 });
  });

  it('without AEP_TOKEN, by default: reading over TCP needs the read token (the hook token), which never grants writing', () => {
    expect(byDefault.check(req({}), 'read')).toMatchObject({ status: 401 });
    expect(new StreamAuth({ allowedOrigins: [] }).check(req({}), 'read')).toMatchObject({ status: 401 });
    expect(byDefault.check(req({ headers: { authorization: `Bearer ${HOOK_TOKEN}x` } }), 'read')).toMatchObject({ status: 401 });
    expect(byDefault.check(req({ headers: { authorization: `Bearer ${HOOK_TOKEN}` } }), 'read')).toEqual({ kind: 'watch', browser: false });
    expect(byDefault.check(req({ url: `/stream?access_token=${HOOK_TOKEN}` }), 'read')).toEqual({ kind: 'watch', browser: false });
    expect(byDefault.check(req({ method: 'POST', url: '/events', headers: { authorization: `Bearer ${HOOK_TOKEN}` } }), 'write')).toMatchObject({
      status: 401,
    });
    // the Unix socket stays trusted
    expect(byDefault.check(req({ unix: true }), 'read')).toEqual({ kind: 'authenticated' });
  });

  it('AEP_STREAM_READ=open: without a token: watch (read only); writing → 401 with the reason', () => {
    expect(open.check(req({}), 'read')).toEqual({ kind: 'watch', browser: false });
    expect(open.check(req({ method: 'POST', url: '/events' }), 'write')).toEqual({
      status: 401,
      body: { error: 'unauthorized', detail: 'set AEP_TOKEN to ingest or command over TCP' },
    });
  });

  it('an Origin: 403 unless allowed and reading; allowed origins still need the token when one is set', () => {
    const browser = (origin: string, extra: Record<string, string> = {}) => req({ headers: { origin, ...extra } });
    expect(withToken.check(browser('https://evil.example', { authorization: `Bearer ${TOKEN}` }), 'read')).toMatchObject({ status: 403 });
    expect(withToken.check(browser('https://dash.example', { authorization: `Bearer ${TOKEN}` }), 'write')).toMatchObject({ status: 403 });
    expect(withToken.check(browser('https://dash.example', { authorization: `Bearer ${TOKEN}` }), 'read')).toEqual({ kind: 'authenticated' });
    expect(withToken.check(browser('https://dash.example'), 'read')).toMatchObject({ status: 401 });
    expect(new StreamAuth({ allowedOrigins: ['https://dash.example'], openRead: true }).check(browser('https://dash.example'), 'read')).toEqual({
      kind: 'watch',
      browser: true,
    });
    expect(open.check(browser('null'), 'read')).toMatchObject({ status: 403 });
  });

  it('refusals never carry the offered token', () => {
    const r = withToken.check(req({ url: '/stream?access_token=MARKERMARKER' }), 'read');
    expect(JSON.stringify(r)).not.toContain('MARKER');
  });
});
