import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { httpCall, runShim, startDaemonProcess, tempDir, waitFor, type DaemonProcess } from '../support/processes.js';
import { readLogs } from '../support/stream-invariants.js';
import { SENTINEL } from '../support/scripted-session.js';

/**
 * Issue 8, item 6: any web page could write the history. A page that rebinds
 * its own name to 127.0.0.1 reaches the daemon's port with its own name in
 * Host (and, for a cross-origin request, an Origin header); a forged
 * on_session_finalize then ended a real session for good. Over TCP every such
 * request must be refused and nothing written; hooks arrive over a private
 * Unix socket by default, and TCP hooks need the install token.
 */

const hook = (name: string, session: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    hook_event_name: name,
    tool_name: null,
    tool_input: null,
    session_id: session,
    cwd: '/w',
    extra: { telemetry_schema_version: SENTINEL, ...extra },
  });
const JSON_TYPE = { 'content-type': 'application/json' };

describe('DNS rebinding and web pages are refused; TCP hooks need the token (the real daemon)', () => {
  let d: DaemonProcess;
  let port = '';
  const events = (session: string) => readLogs(d.historyDir).get(`${session}.jsonl`) ?? [];
  const tcp = (o: Parameters<typeof httpCall>[1]) => httpCall({ url: d.url }, o);

  beforeAll(async () => {
    d = await startDaemonProcess();
    port = new URL(d.url).port;
    // a real session is under way (over the socket, as the shim sends by default)
    const r = await runShim(hook('on_session_start', 'victim'), d.shimEnv);
    expect(r.stdout).toBe('{}');
    await waitFor('the session start written', () => (events('victim').length === 1 ? true : undefined));
  });
  afterAll(async () => {
    await d?.stop();
  });

  it('a rebound name in Host → 403 for POST /hook (even with the token, even as a "simple" text/plain request) and for GET /healthz', async () => {
    const finalize = hook('on_session_finalize', 'victim');
    const attempts = [
      { method: 'POST', path: '/hook', headers: { host: `attacker.example:${port}`, ...JSON_TYPE, ...d.authHeaders }, body: finalize },
      { method: 'POST', path: '/hook', headers: { host: `attacker.example:${port}`, 'content-type': 'text/plain' }, body: finalize },
      { method: 'POST', path: '/hook', headers: { host: 'attacker.example', ...JSON_TYPE }, body: finalize },
      { method: 'POST', path: '/hook', headers: { host: `0.0.0.0:${port}`, ...JSON_TYPE, ...d.authHeaders }, body: finalize },
      { method: 'GET', path: '/healthz', headers: { host: `attacker.example:${port}` } },
    ];
    for (const a of attempts) {
      const r = await tcp(a);
      expect([a.method, a.headers.host, r.status, JSON.parse(r.body).error]).toEqual([a.method, a.headers.host, 403, 'forbidden-host']);
      expect(r.body).not.toContain('hooks');
    }
  });

  it('any Origin header → 403, whatever the origin and even with a local Host and the token', async () => {
    for (const origin of [`http://attacker.example:${port}`, `http://127.0.0.1:${port}`, 'null', 'http://localhost']) {
      const post = await tcp({
        method: 'POST',
        path: '/hook',
        headers: { host: `127.0.0.1:${port}`, origin, ...JSON_TYPE, ...d.authHeaders },
        body: hook('on_session_finalize', 'victim'),
      });
      expect([origin, post.status, JSON.parse(post.body).error]).toEqual([origin, 403, 'forbidden-origin']);
      const get = await tcp({ path: '/healthz', headers: { host: `127.0.0.1:${port}`, origin } });
      expect(get.status).toBe(403);
    }
  });

  it('over TCP, POST /hook without the token, or with a wrong one → 401; nothing written', async () => {
    const good = d.authHeaders.authorization!;
    const wrong = [undefined, 'Bearer ', `Bearer ${'0'.repeat(64)}`, `${good}x`, good.replace('Bearer ', 'Basic '), good.slice(0, -1)];
    for (const authorization of wrong) {
      const r = await tcp({
        method: 'POST',
        path: '/hook',
        headers: { ...JSON_TYPE, ...(authorization !== undefined ? { authorization } : {}) },
        body: hook('on_session_finalize', 'victim'),
      });
      expect([authorization, r.status, r.headers['www-authenticate'], JSON.parse(r.body).error]).toEqual([authorization, 401, 'Bearer', 'unauthorized']);
    }
  });

  it('none of the forged finalizes ended the session: nothing was written, and the real finalize still ends it', async () => {
    const h = await d.health();
    expect(h.hooks).toBe(1);
    expect(h.transport.refused.host).toBeGreaterThanOrEqual(5);
    expect(h.transport.refused.origin).toBeGreaterThanOrEqual(8);
    expect(h.transport.refused.token).toBeGreaterThanOrEqual(6);
    expect(events('victim').map((e) => e.type)).toEqual(['session.started']);
    const r = await runShim(hook('on_session_finalize', 'victim'), d.shimEnv);
    expect(r.stdout).toBe('{}');
    await waitFor('the real session end written', () => (events('victim').some((e) => e.type === 'session.ended') ? true : undefined));
    expect(events('victim').map((e) => e.type)).toEqual(['session.started', 'session.ended']);
  });

  it('with the token and a local Host, TCP works; GET /healthz over TCP needs no token (the compose healthcheck)', async () => {
    const r = await tcp({ method: 'POST', path: '/hook', headers: { ...JSON_TYPE, ...d.authHeaders }, body: hook('on_session_start', 'tcp-ok') });
    expect([r.status, r.body]).toEqual([200, '{}']);
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, 'localhost']) expect((await tcp({ path: '/healthz', headers: { host } })).status).toBe(200);
    // the shim over TCP sends the token it finds next to the state dir
    const s = await runShim(hook('on_session_start', 'tcp-shim'), { AEP_HOOK_URL: d.hookUrl, AEP_STATE_DIR: d.stateDir });
    expect(s.stdout).toBe('{}');
    await waitFor('both TCP sessions written', () => (events('tcp-ok').length === 1 && events('tcp-shim').length === 1 ? true : undefined));
  });

  it('the socket is 0600 in a 0700 directory, and the token file is 0600 with 64 hex characters', () => {
    const sock = statSync(d.socketPath);
    expect(sock.isSocket()).toBe(true);
    expect((sock.mode & 0o777).toString(8)).toBe('600');
    expect((statSync(path.dirname(d.socketPath)).mode & 0o777).toString(8)).toBe('700');
    const token = path.join(d.stateDir, 'hook-token');
    expect((statSync(token).mode & 0o777).toString(8)).toBe('600');
    expect(readFileSync(token, 'utf8')).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('the Unix socket is the default transport', () => {
  it('without AEP_PORT there is no TCP listener, and a shim with no settings at all reaches the daemon under ~/.aep/state', async () => {
    const home = tempDir();
    const stateDir = path.join(home, '.aep', 'state', 'hermes-aep');
    const d = await startDaemonProcess({ AEP_PORT: '', HOME: home }, { historyDir: path.join(home, 'log'), stateDir });
    try {
      expect(d.url).toBe('');
      expect(d.socketPath).toBe(path.join(stateDir, 'hook.sock'));
      expect(existsSync(path.join(stateDir, 'hook-token'))).toBe(false);
      const r = await runShim(hook('on_session_start', 'by-default'), {
        HOME: home,
        AEP_SOCKET: '',
        AEP_HOOK_URL: '',
        AEP_STATE_DIR: '',
        AEP_PORT: '',
        AEP_HOST: '',
      });
      expect([r.code, r.stdout]).toEqual([0, '{}']);
      await waitFor('the default-socket hook written', () => ((readLogs(d.historyDir).get('by-default.jsonl') ?? []).length === 1 ? true : undefined));
    } finally {
      await d.stop();
    }
    expect(existsSync(path.join(stateDir, 'hook.sock'))).toBe(false);
  });

  it('a socket left by a killed daemon is replaced; a second daemon on a live socket refuses to start and the first keeps serving', async () => {
    const a = await startDaemonProcess({ AEP_PORT: '' });
    const dirs = { historyDir: a.historyDir, stateDir: a.stateDir };
    await expect(startDaemonProcess({ AEP_PORT: '' }, dirs)).rejects.toThrow(/exited early \(2\).*answers on/s);
    expect((await a.health()).ok).toBe(true);
    await a.kill();
    expect(statSync(a.socketPath).isSocket()).toBe(true); // left behind by SIGKILL
    const b = await startDaemonProcess({ AEP_PORT: '' }, dirs);
    try {
      expect(b.stderr()).toContain('removed a stale hook socket');
      expect((await b.health()).ok).toBe(true);
    } finally {
      await b.stop();
    }
  });

  it('a path that is not a socket is never removed: the daemon refuses to start', async () => {
    const base = tempDir();
    const file = path.join(base, 'state', 'hook.sock');
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, 'precious');
    await expect(startDaemonProcess({ AEP_PORT: '' }, { historyDir: path.join(base, 'log'), stateDir: path.join(base, 'state') })).rejects.toThrow(
      /exited early \(2\).*not a socket/s,
    );
    expect(readFileSync(file, 'utf8')).toBe('precious');
  });
});
