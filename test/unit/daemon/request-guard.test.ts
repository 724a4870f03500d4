import { afterEach, describe, expect, it } from 'vitest';
import { inProcessDaemon } from '../../support/in-process-daemon.js';
import { hostName, RequestGuard } from '../../../src/transport/request-guard.js';
import { SENTINEL } from '../../support/scripted-session.js';
import path from 'node:path';
import { tempDir } from '../../support/processes.js';
import { pythonDeliveries } from '../../support/hermes-webhook.js';
import { DeliveryLedger } from '../../../src/transport/webhook/delivery-ledger.js';
import { WebhookStats } from '../../../src/daemon/webhook-route.js';

const TOKEN = 'cd'.repeat(32);
const hook0 = JSON.stringify({ hook_event_name: 'on_session_start', session_id: 's1' });
const hook = JSON.stringify({ hook_event_name: 'on_session_start', session_id: 's1', extra: { telemetry_schema_version: SENTINEL } });

describe('Host header names', () => {
  it.each([
    ['localhost', 'localhost'],
    ['LOCALHOST:8393', 'localhost'],
    ['127.0.0.1:1', '127.0.0.1'],
    ['[::1]', '::1'],
    ['[::1]:8393', '::1'],
    ['hermes-aep:8393', 'hermes-aep'],
  ])('%s → %s', (h, name) => expect(hostName(h)).toBe(name));

  it.each(['', ':80', '::1', '[::1', 'a:b:c', 'host:port', 'host:123456', '[::1]x'])('%j is malformed', (h) => expect(hostName(h)).toBeUndefined());
});

describe('the request guard (in process: no listener tag, so the token is always required when set)', () => {
  const apps: ReturnType<typeof inProcessDaemon>[] = [];
  const daemon = (guard: RequestGuard) => {
    const d = inProcessDaemon({ guard });
    apps.push(d);
    return d;
  };
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((d) => d.app.close()));
  });
  const post = (d: ReturnType<typeof inProcessDaemon>, headers: Record<string, string>) =>
    d.app.inject({ method: 'POST', url: '/hook', payload: hook, headers: { 'content-type': 'application/json', ...headers } });

  it('a foreign Host (DNS rebinding) or any Origin → 403 before the body is parsed; nothing is mapped', async () => {
    const d = daemon(new RequestGuard({ boundHost: '0.0.0.0' }));
    const cases: Record<string, string>[] = [
      { host: 'evil.example' },
      { host: 'evil.example:8393' },
      { host: '0.0.0.0:8393' },
      { origin: 'http://127.0.0.1:8393' },
      { origin: 'null' },
    ];
    for (const headers of cases) {
      const r = await post(d, headers);
      expect([r.statusCode, r.json().error]).toEqual([403, 'host' in headers ? 'forbidden-host' : 'forbidden-origin']);
    }
    expect((await d.app.inject({ method: 'GET', url: '/healthz', headers: { host: 'rebound.example' } })).statusCode).toBe(403);
    expect(d.memory.events).toEqual([]);
    expect((await post(d, { host: '127.0.0.1:8393' })).statusCode).toBe(200);
  });

  it('AEP_ALLOWED_HOSTS and a named bound address are accepted', async () => {
    const d = daemon(new RequestGuard({ boundHost: 'box.lan', allowedHosts: ['Hermes-AEP'] }));
    expect((await post(d, { host: 'hermes-aep:8393' })).statusCode).toBe(200);
    expect((await post(d, { host: 'box.lan' })).statusCode).toBe(200);
    expect((await post(d, { host: 'other.lan' })).statusCode).toBe(403);
  });

  it('with a token: POST /hook without it, or with another, → 401; GET /healthz needs none', async () => {
    const g = new RequestGuard({ token: TOKEN });
    const d = daemon(g);
    for (const auth of [undefined, `Bearer ${'0'.repeat(64)}`, `Bearer ${TOKEN.slice(1)}`, `Basic ${TOKEN}`, TOKEN]) {
      const r = await post(d, auth ? { authorization: auth } : {});
      expect([r.statusCode, r.headers['www-authenticate']]).toEqual([401, 'Bearer']);
    }
    expect((await post(d, { authorization: `Bearer ${TOKEN}` })).statusCode).toBe(200);
    expect((await post(d, { authorization: `bearer  ${TOKEN}` })).statusCode).toBe(200);
    expect((await d.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    expect((await d.app.inject({ method: 'GET', url: '/nope' })).statusCode).toBe(401);
    expect(g.stats()).toEqual({ refused: { host: 0, origin: 0, token: 6 } });
  });

  it('POST /webhook is exempt from the hook token (its HMAC is its authentication); its Host is still checked, and every other route still needs the token', async () => {
    const g = new RequestGuard({ token: TOKEN });
    const dir = tempDir();
    const ledger = new DeliveryLedger({ file: path.join(dir, 'webhook-deliveries'), windowMs: 300_000 });
    const stats = new WebhookStats();
    const d = inProcessDaemon({ guard: g, webhook: { secret: 'ef'.repeat(32), windowMs: 300_000, ledger, stats } });
    apps.push(d);
    const [w] = pythonDeliveries([{ envelope: JSON.parse(hook) as Record<string, unknown>, secret: 'ef'.repeat(32) }]);
    const inject = (method: 'POST' | 'GET', url: string, headers: Record<string, string | number> = {}) =>
      d.app.inject({ method, url, payload: method === 'POST' ? w!.body : undefined, headers: { ...(method === 'POST' ? w!.headers : {}), ...headers } });
    expect((await inject('POST', '/webhook')).statusCode).toBe(200);
    expect(stats.accepted).toBe(1);
    expect((await inject('POST', '/webhook', { host: 'evil.example' })).statusCode).toBe(403);
    // the exemption is POST /webhook alone: another method there, or the hook route, without the token → 401
    expect((await inject('GET', '/webhook')).statusCode).toBe(401);
    expect((await inject('POST', '/hook')).statusCode).toBe(401);
    expect((await inject('POST', '/webhooks')).statusCode).toBe(401);
    expect(g.stats()).toEqual({ refused: { host: 1, origin: 0, token: 3 } });
  });
});

describe('the request guard and the AEP stream routes', () => {
  it('hostAllowed: the same Host rule, public for the WebSocket upgrade path', () => {
    const g = new RequestGuard({ boundHost: '0.0.0.0', allowedHosts: ['box.lan'] });
    expect([g.hostAllowed('127.0.0.1:8393'), g.hostAllowed('[::1]'), g.hostAllowed('BOX.lan:1'), g.hostAllowed('0.0.0.0:8393')]).toEqual([
      true,
      true,
      true,
      false,
    ]);
    expect([g.hostAllowed(undefined), g.hostAllowed('evil.example'), g.hostAllowed('a:b:c')]).toEqual([false, false, false]);
  });

  it('the hook token and the Origin refusal narrow to non-stream routes; the Host check does not', async () => {
    const d = inProcessDaemon({ guard: new RequestGuard({ token: TOKEN }) });
    try {
      // no stream routes registered here: passing the guard means reaching the 404
      for (const url of ['/events', '/.well-known/aep', '/stream?access_token=x', '/socket']) {
        const r = await d.app.inject({ method: 'GET', url, headers: { host: 'localhost', origin: 'https://dash.example' } });
        expect([url, r.statusCode]).toEqual([url, 404]);
        const rebound = await d.app.inject({ method: 'GET', url, headers: { host: 'evil.example' } });
        expect([url, rebound.statusCode]).toEqual([url, 403]);
      }
      for (const url of ['/events/', '/streams', '/hook?x=/stream']) {
        const r = await d.app.inject({ method: 'GET', url, headers: { host: 'localhost' } });
        expect([url, r.statusCode]).toEqual([url, 401]);
      }
      const hook = await d.app.inject({ method: 'POST', url: '/hook', payload: hook0, headers: { host: 'localhost', 'content-type': 'application/json' } });
      expect(hook.statusCode).toBe(401);
    } finally {
      await d.app.close();
    }
  });
});
