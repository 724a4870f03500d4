/**
 * The live view's daemon side (src/ui-server/), against the built daemon as a process over TCP: the page's
 * files with their security headers and gzip, nothing outside the ui/ folder; /ui/state under each read
 * rule; POST /ui/command's token, Origin and body rules; a deny from it blocking a call held by the real
 * shim (--control); AEP_UI=off.
 */
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { httpCall, runShim, startDaemonProcess, waitFor, type DaemonProcess, type HttpReply } from '../../support/processes.js';
import { hook, postHook } from '../../support/control-rig.js';
import { ROOT } from '../../support/paths.js';
import { CONTENT_SECURITY_POLICY } from '../../../src/ui-server/security-headers.js';

const TOKEN = 'ui-server-test-token-0123456789';
const running: DaemonProcess[] = [];
afterEach(async () => {
  for (const d of running.splice(0)) await d.stop();
});
const start = async (env: Record<string, string> = {}) => {
  const d = await startDaemonProcess({ AEP_FSYNC_INTERVAL_MS: '0', ...env });
  running.push(d);
  return d;
};
const host = (d: DaemonProcess) => new URL(d.url).host;
const get = (d: DaemonProcess, p: string, headers: Record<string, string> = {}) =>
  httpCall({ url: d.url }, { path: p, headers: { host: host(d), ...headers } });
const bearer = (t: string) => ({ authorization: `Bearer ${t}` });
const hookToken = (d: DaemonProcess) => readFileSync(path.join(d.stateDir, 'hook-token'), 'utf8').trim();
const post = (d: DaemonProcess, body: string | Record<string, unknown>, headers: Record<string, string> = {}) => {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return httpCall(
    { url: d.url },
    {
      method: 'POST',
      path: '/ui/command',
      headers: { host: host(d), 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers },
      body: text,
    },
  );
};
/** A GET sent with its path exactly as written (httpCall resolves it as a URL, which folds `..` away), read as bytes. */
const rawGet = (d: DaemonProcess, p: string, headers: Record<string, string> = {}) =>
  new Promise<{ status: number; bytes: Buffer }>((resolve, reject) => {
    const u = new URL(d.url);
    const req = request({ host: u.hostname, port: u.port, path: p, headers: { host: host(d), ...headers }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
const json = (r: HttpReply) => JSON.parse(r.body) as Record<string, any>;
let n = 0;
const newSession = () => `20261201_120000_ui${++n}`;

const SECURITY = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

describe('the page files: GET /ui and /ui/<file>', () => {
  it('are served from ui/ with no token, their content type and exactly the security headers, gzip when accepted; nothing else is', async () => {
    const d = await start({ AEP_TOKEN: TOKEN });
    for (const [p, file, type] of [
      ['/ui', 'index.html', 'text/html; charset=utf-8'],
      ['/ui/index.html', 'index.html', 'text/html; charset=utf-8'],
      ['/ui/app.js', 'app.js', 'text/javascript; charset=utf-8'],
      ['/ui/app.css', 'app.css', 'text/css; charset=utf-8'],
    ] as const) {
      const plain = await get(d, p);
      expect([p, plain.status, plain.headers['content-type'], plain.headers['content-encoding']]).toEqual([p, 200, type, undefined]);
      expect(plain.headers).toMatchObject(SECURITY);
      expect(plain.headers['access-control-allow-origin']).toBeUndefined();
      expect(plain.body).toBe(readFileSync(path.join(ROOT, 'ui', file), 'utf8'));
      const gz = await httpCall({ url: d.url }, { path: p, headers: { host: host(d), 'accept-encoding': 'gzip, deflate' } });
      expect([p, gz.status, gz.headers['content-encoding'], gz.headers['vary']]).toEqual([p, 200, 'gzip', 'Accept-Encoding']);
      expect(gz.headers).toMatchObject(SECURITY);
      const wire = await rawGet(d, p, { 'accept-encoding': 'gzip' });
      expect(wire.status).toBe(200);
      expect(gunzipSync(wire.bytes).toString('utf8')).toBe(readFileSync(path.join(ROOT, 'ui', file), 'utf8'));
      expect((await get(d, p, { 'accept-encoding': 'gzip;q=0' })).headers['content-encoding']).toBeUndefined();
    }
    // sent as written (no URL normalising on the way): the daemon sees the dots
    for (const p of [
      '/ui/../package.json',
      '/ui/%2e%2e/',
      '/ui/%2e%2e/package.json',
      '/ui/%2e%2e%2fpackage.json',
      '/ui/..%2fpackage.json',
      '/ui/.env',
      '/ui/.gitignore',
      '/ui/nope.js',
      '/ui/app.ts',
      '/ui/sub/app.js',
    ]) {
      const r = await rawGet(d, p);
      expect([p, r.status]).toEqual([p, 404]);
      expect(r.bytes.toString('utf8')).not.toContain('"name"');
    }
  });

  it("a foreign Origin is refused 403 (as on every route); the daemon's own origin may load them", async () => {
    const d = await start({ AEP_TOKEN: TOKEN });
    const foreign = await get(d, '/ui/app.js', { origin: 'http://evil.example' });
    expect([foreign.status, json(foreign)['error']]).toEqual([403, 'forbidden-origin']);
    // a look-alike of the own origin is foreign too
    expect((await get(d, '/ui/app.js', { origin: `https://${host(d)}` })).status).toBe(403);
    expect((await get(d, '/ui/app.js', { origin: `http://${host(d)}` })).status).toBe(200);
    // the exception is the live view's: another route still refuses its origin
    expect((await get(d, '/healthz', { origin: `http://${host(d)}` })).status).toBe(403);
  });

  it('AEP_UI=off: /ui, its files and its state answer 404 not-found', async () => {
    const d = await start({ AEP_UI: 'off', AEP_TOKEN: TOKEN });
    for (const p of ['/ui', '/ui/app.js', '/ui/state']) {
      const r = await get(d, p, bearer(hookToken(d)));
      expect([p, r.status, json(r)['error']]).toEqual([p, 404, 'not-found']);
    }
    const c = await post(d, { action: 'instruct', session: 's', text: 'x' }, bearer(hookToken(d)));
    expect(c.status).toBe(404);
  });
});

describe('GET /ui/state: the stream read rule', () => {
  it('AEP_TOKEN set: only AEP_TOKEN reads (canAnswer true); no token or the hook token is 401', async () => {
    const d = await start({ AEP_TOKEN: TOKEN, AEP_UI_JAEGER_URL: 'http://jaeger.lan:16686/' });
    const ok = await get(d, '/ui/state', bearer(TOKEN));
    expect(ok.status).toBe(200);
    expect(ok.headers).toMatchObject(SECURITY);
    const s = json(ok);
    expect(s).toMatchObject({
      version: expect.any(String),
      jaegerUrl: 'http://jaeger.lan:16686',
      capture: 'metadata',
      gates: { control: false, instruct: false },
      canAnswer: true,
    });
    expect(Math.abs(Date.parse(s['now']) - Date.now())).toBeLessThan(60_000);
    for (const h of [{}, bearer(hookToken(d)), { authorization: 'Bearer' }]) {
      const r = await get(d, '/ui/state', h);
      expect([r.status, json(r)['error']]).toEqual([401, 'unauthorized']);
    }
    // never from the query
    expect((await get(d, `/ui/state?access_token=${TOKEN}`)).status).toBe(401);
  });

  it('no AEP_TOKEN: the hook token reads (canAnswer false), nothing else; AEP_STREAM_READ=open: anyone reads', async () => {
    const d = await start({ AEP_TOKEN: '', AEP_HERMES_CONTROL: '1' });
    const r = await get(d, '/ui/state', bearer(hookToken(d)));
    expect(r.status).toBe(200);
    expect(json(r)).toMatchObject({ canAnswer: false, gates: { control: true, instruct: false }, jaegerUrl: 'http://127.0.0.1:16686' });
    expect((await get(d, '/ui/state')).status).toBe(401);
    expect((await get(d, '/ui/state', bearer('x'.repeat(64)))).status).toBe(401);
    const open = await start({ AEP_TOKEN: '', AEP_STREAM_READ: 'open' });
    const o = await get(open, '/ui/state');
    expect([o.status, json(o)['canAnswer']]).toEqual([200, false]);
  });
});

describe('POST /ui/command: AEP_TOKEN in the header, the own origin or none, a small JSON body', () => {
  it('refuses without AEP_TOKEN (401, the hook token included), a foreign Origin (403, token or not), a bad body (400), a large one (413)', async () => {
    const d = await start({ AEP_TOKEN: TOKEN });
    const body = { action: 'instruct', session: newSession(), text: 'look at the tests first' };
    for (const h of [{}, bearer(hookToken(d)), bearer(`${TOKEN}x`)]) {
      const r = await post(d, body, h);
      expect([r.status, json(r)['error'], r.headers['www-authenticate']]).toEqual([401, 'unauthorized', 'Bearer']);
    }
    for (const origin of ['http://evil.example', 'null', `https://${host(d)}`, `http://${host(d)}.evil.example`]) {
      const r = await post(d, body, { ...bearer(TOKEN), origin });
      expect([origin, r.status, json(r)['error']]).toEqual([origin, 403, 'forbidden-origin']);
      expect(r.headers['access-control-allow-origin']).toBeUndefined();
    }
    // a preflight finds no route and no CORS header
    const pre = await httpCall(
      { url: d.url },
      { method: 'OPTIONS', path: '/ui/command', headers: { host: host(d), origin: 'http://evil.example', 'access-control-request-method': 'POST' } },
    );
    expect(pre.status).toBe(403);
    expect(pre.headers['access-control-allow-origin']).toBeUndefined();
    for (const bad of [
      { action: 'answer', session: 's', card: 'c', option: 'maybe' },
      { action: 'answer', session: 's', option: 'deny' },
      { action: 'instruct', session: 's', text: '' },
      { action: 'pause', session: 's' },
      { action: 'instruct', session: 's', text: 'x', extra: 1 },
      [1, 2],
    ]) {
      const r = await post(d, bad as Record<string, unknown>, bearer(TOKEN));
      expect([r.status, json(r)['error']]).toEqual([400, 'invalid-command']);
    }
    const notJson = await post(d, '{"action":', bearer(TOKEN));
    expect([notJson.status, json(notJson)['error']]).toEqual([400, 'invalid-json']);
    const empty = await post(d, '', bearer(TOKEN));
    expect([empty.status, json(empty)['error']]).toEqual([400, 'empty-body']);
    const text = await httpCall(
      { url: d.url },
      { method: 'POST', path: '/ui/command', headers: { host: host(d), 'content-type': 'text/plain', ...bearer(TOKEN) }, body: '{}' },
    );
    expect([text.status, json(text)['error']]).toEqual([415, 'unsupported-media-type']);
    const large = await post(d, { action: 'instruct', session: 's', text: 'x'.repeat(17 * 1024) }, bearer(TOKEN));
    expect([large.status, json(large)['error']]).toEqual([413, 'too-large']);
  });

  it('no AEP_TOKEN configured: every answer is 401, whatever is presented', async () => {
    const d = await start({ AEP_TOKEN: '' });
    for (const h of [{}, bearer(hookToken(d))]) expect((await post(d, { action: 'instruct', session: 's', text: 'x' }, h)).status).toBe(401);
  });

  it('with steering off an instruction is rejected `unsupported` with the hint; the own origin and no origin both reach the target; an unknown session is rejected no-route', async () => {
    const d = await start({ AEP_TOKEN: TOKEN });
    const s = newSession();
    expect((await postHook(d.socketPath, hook('on_session_start', s))).status).toBe(200);
    for (const h of [bearer(TOKEN), { ...bearer(TOKEN), origin: `http://${host(d)}` }]) {
      const r = await post(d, { action: 'instruct', session: s, text: 'look at the tests first' }, h);
      expect(r.status).toBe(200);
      const a = json(r);
      expect(a).toMatchObject({ outcome: 'rejected', reason: 'unsupported' });
      expect(a['hint']).toContain('AEP_INSTRUCT=1');
      expect(a['hint']).toContain('--instruct');
    }
    // the command and its nack are in the session's history, sent by the live view
    const hist = readFileSync(path.join(d.historyDir, 'hermes', `${s}.jsonl`), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, any>);
    const cmds = hist.filter((e) => e['type'] === 'x.hermes.control.instruct');
    expect(cmds.map((c) => c['agent'])).toEqual(['hermes-aep-ui', 'hermes-aep-ui']);
    expect(hist.filter((e) => e['type'] === 'control.rejected').map((e) => e['cause'])).toEqual(cmds.map((c) => c['id']));
    const none = await post(d, { action: 'instruct', session: newSession(), text: 'x' }, bearer(TOKEN));
    expect([none.status, json(none)['outcome'], json(none)['reason']]).toEqual([200, 'rejected', 'no-route']);
  });

  it("gate on: a deny with a reason from the page makes the real shim (--control) print Hermes's block with that reason; the answer is accepted", async () => {
    const d = await start({ AEP_TOKEN: TOKEN, AEP_HERMES_CONTROL: '1' });
    const s = newSession();
    const env = { ...d.shimEnv, AEP_HERMES_CONTROL: '', AEP_INSTRUCT: '' };
    for (const h of ['on_session_start', 'pre_llm_call']) expect((await runShim(hook(h, s), env)).stdout).toBe('{}');
    const held = runShim(hook('pre_tool_call', s, { call: 'call_1', tool: 'terminal' }), env, 'shim', ['--control']);
    const file = path.join(d.historyDir, 'hermes', `${s}.jsonl`);
    const card = await waitFor('the gate card', () => {
      let lines: string[];
      try {
        lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
      } catch {
        return undefined;
      }
      return lines
        .map((l) => JSON.parse(l) as Record<string, any>)
        .find((e) => e['type'] === 'attention.requested' && e['data']?.respond_via?.includes('control'));
    });
    const t0 = performance.now();
    const r = await post(
      d,
      { action: 'answer', session: s, card: card['id'], option: 'deny', reason: 'not on prod' },
      { ...bearer(TOKEN), origin: `http://${host(d)}` },
    );
    const ms = performance.now() - t0;
    expect([r.status, json(r)]).toEqual([200, { outcome: 'accepted' }]);
    const shim = await held;
    expect([shim.code, JSON.parse(shim.stdout)]).toEqual([0, { action: 'block', message: 'not on prod' }]);
    console.log(`POST /ui/command deny -> accepted in ${ms.toFixed(1)} ms`);
    // a second answer to the same card: rejected, the card is no longer pending
    const again = await post(d, { action: 'answer', session: s, card: card['id'], option: 'allow' }, bearer(TOKEN));
    expect(json(again)).toMatchObject({ outcome: 'rejected', reason: 'refused' });
    expect(json(again)['hint']).toBeUndefined();
  });
});
