import { mkdtempSync } from 'node:fs';
import { request } from 'node:http';
import { connect } from 'node:net';
import type { Duplex } from 'node:stream';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket as WsClient } from 'ws';
import { openListeners } from '../../../../src/transport/listeners.js';
import { waitFor } from '../../../support/processes.js';
import { event } from './fakes.js';
import { Client, hello, startRig, type Got, type Rig } from './harness.js';

let rig: Rig | undefined;
const clients: Client[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await rig?.close();
  rig = undefined;
});
const open = async (url: string, h?: Record<string, unknown>, headers?: Record<string, string>) => {
  const c = await Client.open(url, h, headers);
  clients.push(c);
  return c;
};

/** the raw HTTP answer to an upgrade request (refusals are plain HTTP statuses) */
function upgradeStatus(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url.replace('ws:', 'http:'), {
      headers: { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==', ...headers },
    });
    req.on('upgrade', (res, socket) => {
      socket.destroy();
      resolve({ status: res.statusCode ?? 0, body: '' });
    });
    req.on('response', (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString('utf8')));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('socket endpoint: the hello exchange', () => {
  it('AEP-0003 §3.5.1: a first frame other than hello draws error hello-required, then the close', async () => {
    rig = await startRig();
    const c = await open(rig.url);
    c.send(event('s1', 0));
    const err = await c.next((f) => f.type === 'error');
    expect(err['code']).toBe('hello-required');
    await c.whenClosed();
    expect(c.got.map((f) => f.type)).toEqual(['error']);
    expect(rig.ingress.taken).toHaveLength(0);
  });

  it('AEP-0003 §4 rule 1: no version in common draws error version-unsupported listing ["0.1"], then the close', async () => {
    rig = await startRig();
    const c = await open(rig.url);
    c.send({ type: 'hello', versions: ['9.9'], role: 'consumer' });
    const err = await c.next((f) => f.type === 'error');
    expect(err).toMatchObject({ code: 'version-unsupported', versions: ['0.1'] });
    await c.whenClosed();
  });

  it('AEP-0003 §4 rule 1: the reply selects exactly one version from the intersection and declares the endpoint', async () => {
    rig = await startRig();
    const c = await open(rig.url, { type: 'hello', versions: ['0.2', '0.1'], role: 'consumer' });
    const h = c.got[0]!;
    expect(h).toMatchObject({ type: 'hello', versions: ['0.1'], role: 'collector', identity: { agent: 'hermes', instance: 'test-host/1' } });
    expect(h['capabilities']).toEqual({
      filters: ['attr-match'],
      replay: { buffer: 100, all: true },
      capture: ['none', 'metadata', 'redacted', 'full'],
      control: { accepts: [], ack_window_ms: 10000 },
      roster: {},
      experimental: {},
    });
  });

  it('AEP-0003 §2 and §4 rule 4: unknown capability keys and unknown frame types are ignored; the connection keeps working', async () => {
    rig = await startRig();
    const c = await open(rig.url);
    c.send(hello('consumer', { capabilities: { futurecap: { enabled: true } } }));
    c.send({ type: 'zigzag', note: 'unknown' });
    c.send({ type: 'subscribe', id: 'sub-1', filter: { type: ['agent.*'] } });
    await c.next((f) => f.type === 'subscribed' && f['id'] === 'sub-1');
    expect(c.got.map((f) => f.type)).toEqual(['hello', 'subscribed']);
    expect(c.closed).toBeUndefined();
  });

  it('AEP-0003 §4 rule 2: an unknown role is refused and the connection closed', async () => {
    rig = await startRig();
    const c = await open(rig.url);
    c.send(hello('overlord'));
    expect((await c.next((f) => f.type === 'error'))['code']).toBe('invalid-hello');
    await c.whenClosed();
  });

  it('AEP-0003 §3.5.2: a binary frame closes the connection with 1003', async () => {
    rig = await startRig();
    const c = await open(rig.url, hello('consumer'));
    c.ws.send(Buffer.from('{"type":"ping"}'), { binary: true });
    expect((await c.whenClosed()).code).toBe(1003);
  });

  it('AEP-0003 §3.5.5: ping is answered with pong echoing t; the endpoint pings, and drops a peer silent for 3 intervals', async () => {
    rig = await startRig({ heartbeatMs: 40 });
    const c = await open(rig.url, hello('consumer'));
    c.send({ type: 'ping', t: 42 });
    expect((await c.next((f) => f.type === 'pong'))['t']).toBe(42);
    const ping = await c.next((f) => f.type === 'ping', 'a ping from the endpoint');
    expect(typeof ping['t']).toBe('number');
    // this client never answers: the endpoint gives up on it
    await c.whenClosed();
    expect(rig.endpoint.stats()['heartbeat_timeouts']).toBe(1);
  });

  it('AEP-0003 §3.5.5: a peer that answers its pings stays connected past 3 intervals', async () => {
    rig = await startRig({ heartbeatMs: 30 });
    const c = await open(rig.url, hello('consumer'));
    c.ws.on('message', (d) => {
      const f = JSON.parse((d as Buffer).toString('utf8')) as Got;
      if (f.type === 'ping') c.send({ type: 'pong', t: f['t'] });
    });
    await waitFor('6 pings', () => c.got.filter((f) => f.type === 'ping').length >= 6 || undefined);
    expect(c.closed).toBeUndefined();
  });
});

describe('socket endpoint: the upgrade gate', () => {
  it('AEP-0003 §3.5.1: only /socket upgrades; a foreign Host is refused 403 before the upgrade', async () => {
    rig = await startRig();
    expect((await upgradeStatus(rig.url.replace('/socket', '/elsewhere'))).status).toBe(404);
    expect((await upgradeStatus(rig.url, { host: 'evil.example:80' })).status).toBe(403);
    expect((await upgradeStatus(rig.url)).status).toBe(101);
  });

  it('AEP-0003 §8.1: with a token set, a wrong or missing credential is refused 401 and never echoed', async () => {
    rig = await startRig({ token: 'tok-secret-1' });
    const wrong = await upgradeStatus(`${rig.url}?access_token=MARKER-WRONG-TOKEN`);
    expect(wrong.status).toBe(401);
    expect(wrong.body).not.toContain('MARKER-WRONG-TOKEN');
    expect((await upgradeStatus(rig.url)).status).toBe(401);
    expect((await upgradeStatus(rig.url, { authorization: 'Bearer tok-secret-1' })).status).toBe(101);
  });

  it('AEP-0003 §8.1: a browser-style global WebSocket passing ?access_token= completes hello', async () => {
    rig = await startRig({ token: 'tok-secret-2' });
    const ws = new WebSocket(`${rig.url}?access_token=tok-secret-2`);
    const frames: Got[] = [];
    ws.onmessage = (m) => frames.push(JSON.parse(String(m.data)) as Got);
    ws.onopen = () => ws.send(JSON.stringify(hello('emitter')));
    const h = await waitFor('the hello reply', () => frames.find((f) => f.type === 'hello'));
    expect(h['versions']).toEqual(['0.1']);
    ws.close();
  });

  it('upgrades over the Unix socket are tagged unix before the auth check', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'aep-sock-'));
    rig = await startRig({ token: 'tok', socket: path.join(dir, 'hook.sock') });
    const ws = new WsClient(`ws+unix://${path.join(dir, 'hook.sock')}:/socket`);
    const frames: Got[] = [];
    ws.on('message', (d) => frames.push(JSON.parse((d as Buffer).toString('utf8')) as Got));
    ws.on('open', () => ws.send(JSON.stringify(hello('emitter'))));
    await waitFor('the hello reply', () => frames.find((f) => f.type === 'hello'));
    expect(rig.auth.transports).toEqual(['unix']);
    ws.close();
  });

  it('listeners: an upgraded socket the handler still holds is dropped at the close grace, so close settles', async () => {
    const held: Duplex[] = [];
    const listening = await openListeners(
      (_req, res) => res.end(),
      { tcp: { host: '127.0.0.1', port: 0 } },
      (_req, socket) => held.push(socket),
    );
    const client = connect(Number(new URL(listening.url!).port), '127.0.0.1');
    client.on('error', () => undefined);
    client.write('GET /socket HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n');
    await waitFor('the upgrade handed over', () => held[0]);
    // the client never closes and the handler never lets go: without the grace this close never settles and the test
    // fails at its timeout; the socket destroyed is the grace's doing. Its time: bench bounded-work (bounded.listener_close_grace)
    await listening.close(100);
    expect(held[0]!.destroyed).toBe(true);
    client.destroy();
  });
});
