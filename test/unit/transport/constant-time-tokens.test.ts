import type { IncomingMessage } from 'node:http';
import * as crypto from 'node:crypto';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { RequestGuard, tagTransport } from '../../../src/transport/request-guard.js';
import { StreamAuth } from '../../../src/stream/stream-auth.js';
import { inProcessDaemon } from '../../support/in-process-daemon.js';

// README, Security posture: "tokens are compared in constant time". Both token checks hash each side to one
// length and compare with crypto.timingSafeEqual; this proves every presented credential, whatever its shape
// (right, wrong, another length, empty, absent), reaches that comparison instead of an early exit.
vi.mock('node:crypto', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:crypto')>();
  return { ...real, timingSafeEqual: vi.fn(real.timingSafeEqual) };
});

const compared = vi.mocked(crypto.timingSafeEqual);
beforeEach(() => {
  compared.mockClear();
});

const TOKEN = 'cd'.repeat(32);
/** every shape a presented credential can take; `undefined` = no credential at all */
const PRESENTED: readonly [string, string | undefined][] = [
  ['the right token', TOKEN],
  ['a wrong token of the same length', 'ce'.repeat(32)],
  ['a shorter token', TOKEN.slice(0, 7)],
  ['a longer token', `${TOKEN}0`],
  ['an empty token', ''],
  ['no token', undefined],
];

describe('RequestGuard compares the hook token in constant time', () => {
  it.each(PRESENTED)('%s goes through timingSafeEqual once', async (_name, token) => {
    const d = inProcessDaemon({ guard: new RequestGuard({ token: TOKEN }) });
    try {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (token !== undefined) headers['authorization'] = `Bearer ${token}`;
      const r = await d.app.inject({
        method: 'POST',
        url: '/hook',
        payload: JSON.stringify({ hook_event_name: 'on_session_start', session_id: 's1' }),
        headers,
      });
      expect(r.statusCode).toBe(token === TOKEN ? 200 : 401);
      expect(compared).toHaveBeenCalledTimes(1);
    } finally {
      await d.app.close();
    }
  });

  it('a header that is not a Bearer credential at all still goes through timingSafeEqual', async () => {
    const d = inProcessDaemon({ guard: new RequestGuard({ token: TOKEN }) });
    try {
      const r = await d.app.inject({
        method: 'POST',
        url: '/hook',
        payload: '{}',
        headers: { 'content-type': 'application/json', authorization: `Basic ${TOKEN}` },
      });
      expect(r.statusCode).toBe(401);
      expect(compared).toHaveBeenCalledTimes(1);
    } finally {
      await d.app.close();
    }
  });
});

const req = (o: { url?: string; authorization?: string }): IncomingMessage => {
  const r = {
    url: o.url ?? '/stream',
    method: 'GET',
    headers: o.authorization === undefined ? {} : { authorization: o.authorization },
  } as unknown as IncomingMessage;
  tagTransport(r, 'tcp');
  return r;
};

describe('StreamAuth compares AEP_TOKEN and the read token in constant time', () => {
  const withToken = new StreamAuth({ token: TOKEN, allowedOrigins: [] });
  const readOnly = new StreamAuth({ readToken: TOKEN, allowedOrigins: [] });

  it.each(PRESENTED)('%s, in the Authorization header, goes through timingSafeEqual (AEP_TOKEN and read token)', (_name, token) => {
    const r = () => req(token === undefined ? {} : { authorization: `Bearer ${token}` });
    const ok = token === TOKEN;
    expect(withToken.check(r(), 'write')).toMatchObject(ok ? { kind: 'authenticated' } : { status: 401 });
    expect(compared).toHaveBeenCalledTimes(1);
    expect(readOnly.check(r(), 'read')).toMatchObject(ok ? { kind: 'watch' } : { status: 401 });
    expect(compared).toHaveBeenCalledTimes(2);
  });

  it.each(PRESENTED.filter(([, t]) => t !== undefined))('%s, as ?access_token, goes through timingSafeEqual', (_name, token) => {
    const r = () => req({ url: `/stream?live=0&access_token=${encodeURIComponent(token!)}` });
    const ok = token === TOKEN;
    expect(withToken.check(r(), 'read')).toMatchObject(ok ? { kind: 'authenticated' } : { status: 401 });
    expect(readOnly.check(r(), 'read')).toMatchObject(ok ? { kind: 'watch' } : { status: 401 });
    expect(compared).toHaveBeenCalledTimes(2);
  });

  it('a header that is not a Bearer credential still goes through timingSafeEqual', () => {
    expect(withToken.check(req({ authorization: `Basic ${TOKEN}` }), 'read')).toMatchObject({ status: 401 });
    expect(readOnly.check(req({ authorization: `Basic ${TOKEN}` }), 'read')).toMatchObject({ status: 401 });
    expect(compared).toHaveBeenCalledTimes(2);
  });
});
