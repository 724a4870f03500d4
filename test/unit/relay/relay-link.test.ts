import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { RelayLink, type RelayLinkOptions } from '../../../src/relay/relay-link.js';
import { silentLogger, type Logger } from '../../../src/core/logger.js';
import { waitFor } from '../../support/processes.js';
import { ev, FakeRelay } from './fake-relay.js';

const TOKEN = 'relay-test-token-0123456789';
let relay: FakeRelay | undefined;
let link: RelayLink | undefined;
afterEach(async () => {
  await link?.close();
  await relay?.close();
  link = relay = undefined;
});

const mkLink = (url: string, o: Partial<RelayLinkOptions> = {}) =>
  (link = new RelayLink({
    url,
    token: TOKEN,
    outbox: 100,
    instance: 'h/1',
    ceiling: 'redacted',
    heartbeatMs: 60_000,
    log: silentLogger,
    backoff: { minMs: 10, maxMs: 40 },
    ...o,
  }));

describe('RelayLink (AEP-0003 §3.5, §4 as an emitter)', () => {
  it('AEP-0003 §4: hello first with the bearer token; no event before the relay hello, then all in order', async () => {
    relay = await FakeRelay.start();
    relay.holdHello = true;
    const l = mkLink(relay.url);
    l.start();
    const c = await waitFor('hello from the link', () => relay!.conns[0]?.frames[0] && relay!.conns[0]);
    expect(c.auth).toBe(`Bearer ${TOKEN}`);
    expect(c.frames[0]).toMatchObject({ type: 'hello', versions: ['0.1'], role: 'emitter', identity: { agent: 'hermes', instance: 'h/1' } });
    expect(c.frames[0]!.capabilities).toMatchObject({ capture: ['none', 'metadata', 'redacted'], control: { accepts: [], ack_window_ms: 10000 } });
    const es = [ev(), ev('error'), ev()];
    l.offer(es);
    // a round trip proves the link has read everything sent so far, with no event among its frames
    c.ws.send(JSON.stringify({ type: 'ping', t: 7 }));
    await waitFor('pong', () => c.frames.find((f) => f.type === 'pong'));
    expect(c.frames.filter((f) => String(f.type).includes('.'))).toEqual([]);
    expect(l.stats()).toMatchObject({ connected: false, queued: 3, sent: 0 });
    relay.sayHello(c.ws);
    await waitFor('3 events', () => relay!.events.length === 3);
    expect(relay.events.map((e) => e.id)).toEqual(es.map((w) => w.id));
    expect(l.stats()).toMatchObject({ connected: true, queued: 0, sent: 3 });
  });

  it('cut mid-stream and restored: every event arrives at least once, exactly once after relay dedupe', async () => {
    relay = await FakeRelay.start();
    const l = mkLink(relay.url);
    l.start();
    await waitFor('connected', () => l.stats().connected);
    const all = Array.from({ length: 60 }, (_, i) => ev(i % 3 === 0 ? 'notice' : 'info'));
    l.offer(all.slice(0, 20));
    await waitFor('first 20', () => relay!.events.length >= 20);
    relay.conns[0]!.ws.terminate(); // the cut, with events in flight
    l.offer(all.slice(20, 40));
    await waitFor('link sees the cut and comes back', () => relay!.conns.length === 2 && l.stats().connected);
    l.offer(all.slice(40));
    await waitFor('all 60 after dedupe', () => relay!.deduped().length === 60);
    expect(relay.deduped()).toEqual(all.map((w) => `${w.source}|${w.id}`));
    const s = l.stats();
    expect(s.reconnects).toBe(1);
    expect(s.resent).toBeGreaterThan(0); // the window before the cut went again
    expect(s.dropped_low + s.dropped_notice).toBe(0);
  });

  it('outbox overflow while down drops debug/info first, counts, and notice+ drops degrade /healthz', async () => {
    const lines: string[] = [];
    const log: Logger = { ...silentLogger, error: (m) => lines.push(m) };
    const l = mkLink('ws://127.0.0.1:9/socket', { outbox: 4, log, backoff: { minMs: 60_000, maxMs: 60_000 } });
    l.offer([ev('notice'), ev('info'), ev('debug'), ev('error'), ev('info'), ev('warning')]);
    expect(l.stats()).toMatchObject({ queued: 4, dropped_low: 2, dropped_notice: 0 });
    expect(l.health()).toBeUndefined();
    // one info is still queued: it goes for the first newcomer, then the oldest notice+ events go
    l.offer([ev('critical'), ev('notice'), ev('error')]);
    expect(l.stats()).toMatchObject({ queued: 4, dropped_low: 3, dropped_notice: 2 });
    expect(l.health()).toMatchObject({ sink: 'relay' });
    expect(lines.filter((m) => m.includes('relay link dropping'))).toHaveLength(1); // once per episode
  });

  it('error and close firing together arm exactly one reconnect per attempt', async () => {
    // a server that breaks every upgrade: the client sees both error and close
    let attempts = 0;
    const srv: Server = createServer();
    srv.on('upgrade', (_req, socket) => {
      attempts++;
      socket.destroy();
    });
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
    try {
      const l = mkLink(`ws://127.0.0.1:${(srv.address() as AddressInfo).port}/socket`, { backoff: { minMs: 5, maxMs: 5 } });
      l.start();
      await waitFor('6 attempts', () => attempts >= 6);
      await l.close();
      const r = l.stats().reconnects;
      expect(r === attempts || r === attempts - 1 || r === attempts + 1).toBe(true);
      expect(l.stats().connected).toBe(false);
    } finally {
      await new Promise<void>((r) => srv.close(() => r()));
    }
  });

  it('AEP-0003 §3.5: pings the relay, answers ping with pong; commands are counted and ignored', async () => {
    relay = await FakeRelay.start();
    const l = mkLink(relay.url, { heartbeatMs: 100 });
    l.start();
    await waitFor('connected', () => l.stats().connected);
    const c = relay.conns[0]!;
    await waitFor('a ping from the link', () => c.frames.find((f) => f.type === 'ping' && typeof f.t === 'number'));
    c.ws.send(JSON.stringify({ type: 'ping', t: 'abc' }));
    await waitFor('pong echoing t', () => c.frames.find((f) => f.type === 'pong' && f.t === 'abc'));
    c.ws.send(JSON.stringify({ type: 'control.cancel', id: 'k1', session: 's1', data: { scope: 'run' } }));
    c.ws.send('not json');
    c.ws.send(JSON.stringify({ type: 'whatever-frame' }));
    await waitFor('command counted', () => l.stats().commands_ignored === 1);
    expect(l.stats().connected).toBe(true);
  });

  it('a relay error frame before hello: logged by code, the link retries later', async () => {
    relay = await FakeRelay.start();
    relay.holdHello = true;
    const warns: string[] = [];
    const l = mkLink(relay.url, { log: { ...silentLogger, warn: (m, f) => warns.push(`${m} ${String(f?.code)}`) } });
    l.start();
    const c = await waitFor('hello', () => relay!.conns[0]?.frames[0] && relay!.conns[0]);
    c.ws.send(JSON.stringify({ type: 'error', code: 'version-unsupported', versions: ['9.0'] }));
    await waitFor('a second attempt', () => relay!.conns.length >= 2);
    expect(warns.some((w) => w.includes('version-unsupported'))).toBe(true);
    expect(l.stats().connected).toBe(false);
  });
});
