import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyedSession, postHook } from '../support/hook-client.js';
import { startDaemonProcess, waitFor, type DaemonProcess } from '../support/processes.js';
import { SseConsumer, WsConsumer } from '../support/aep-stream-client.js';
import { historyEvents } from '../support/history-lines.js';

const TOKEN = 'relay-fault-token-0123456789abcdef';
/** content planted in the prompt and the command: A captures `full`, so only the ceiling keeps it out of a stream */
const PLANT = 'PLANTEDxRELAYxMARKER';

/** A loopback TCP proxy to `port` that can be cut (every connection destroyed, new ones refused) and restored. */
async function cuttableProxy(port: number): Promise<{ port: number; cut(): void; restore(): void; close(): Promise<void> }> {
  const open = new Set<Socket>();
  let up = true;
  const srv: Server = createServer((client) => {
    if (!up) return client.destroy();
    const upstream = connect(port, '127.0.0.1');
    open.add(client).add(upstream);
    const end = () => (client.destroy(), upstream.destroy(), open.delete(client), open.delete(upstream));
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  return {
    port: (srv.address() as AddressInfo).port,
    cut: () => {
      up = false;
      for (const s of open) s.destroy();
    },
    restore: () => {
      up = true;
    },
    close: () => new Promise<void>((r) => ((up = false), [...open].forEach((s) => s.destroy()), srv.close(() => r()))),
  };
}

/**
 * Daemon A relays its own events to daemon B (AEP-0003 §3.5 emitter link)
 * through a proxy that is cut mid-session: hooks keep coming into A while it
 * is cut; once restored, B's history holds every event of A exactly once
 * (the link resends what the cut may have lost; B dedupes on (source, id)).
 */
describe('relay link: a cut between two daemons loses nothing and duplicates nothing', () => {
  let a: DaemonProcess;
  let b: DaemonProcess;
  let proxy: Awaited<ReturnType<typeof cuttableProxy>>;
  const sid = 'relay_fault_1';
  const hooks = keyedSession(sid, 10).map((h) => ({
    ...h,
    body: h.body.replace('"user_message":"go"', `"user_message":"go ${PLANT}"`).replace('"command":""', `"command":"echo ${PLANT}"`),
  }));
  /** consumers on B, attached before the session: tool events at metadata; everything at none; everything as stored */
  let tools: SseConsumer;
  let bare: SseConsumer;
  let stored: WsConsumer;
  const keyOf = (line: string) => {
    const e = JSON.parse(line) as { source: string; id: string };
    return `${e.source} ${e.id}`;
  };
  const fromA = (e: Record<string, any>) => String(e.source).startsWith('aep://daemon-a/');

  beforeAll(async () => {
    b = await startDaemonProcess({ AEP_TOKEN: TOKEN, AEP_SOURCE_HOST: 'daemon-b' });
    proxy = await cuttableProxy(Number(new URL(b.url).port));
    a = await startDaemonProcess({
      AEP_TOKEN: TOKEN,
      AEP_SOURCE_HOST: 'daemon-a',
      AEP_RELAY_URL: `ws://127.0.0.1:${proxy.port}/socket`,
      AEP_STREAM_HEARTBEAT_MS: '500',
      AEP_CAPTURE: 'full',
    });
    const q = (o: Record<string, string>) => `/stream?${new URLSearchParams(o).toString()}`;
    tools = new SseConsumer({ url: b.url }, { token: TOKEN, path: q({ filter: JSON.stringify({ type: ['tool.*'], session: sid }), capture: 'metadata' }) });
    bare = new SseConsumer({ url: b.url }, { token: TOKEN, path: q({ filter: JSON.stringify({ session: sid }), capture: 'none' }) });
    stored = await WsConsumer.open(`${b.url.replace('http:', 'ws:')}/socket`, TOKEN);
    stored.send({ type: 'subscribe', id: 'all', filter: { session: sid } });
    await waitFor('subscribed on B', () => stored.parsed().some((f) => f.type === 'subscribed') || undefined);
    await waitFor('A linked to B', async () => ((await a.health()).relay?.connected === true ? true : undefined));
    const half = Math.floor(hooks.length / 2);
    for (const h of hooks.slice(0, half)) expect((await postHook(a.hookUrl, false, h.body, a.stateDir)).status).toBe(200);
    await waitFor('B has the first half', () => (historyEvents(b.historyDir).filter(fromA).length >= half ? true : undefined));
    proxy.cut();
    for (const h of hooks.slice(half)) expect((await postHook(a.hookUrl, false, h.body, a.stateDir)).status).toBe(200);
    await waitFor('A saw the cut', async () => ((await a.health()).relay?.connected === false ? true : undefined));
    proxy.restore();
    const total = hooks.length;
    await waitFor(
      'B has every event of A',
      () =>
        new Set(
          historyEvents(b.historyDir)
            .filter(fromA)
            .map((e) => e.id),
        ).size >= total
          ? true
          : undefined,
      60_000,
    );
  });
  afterAll(async () => {
    await tools?.close();
    await bare?.close();
    stored?.close();
    await a?.stop();
    await proxy?.close();
    await b?.stop();
  });

  it("B's history holds every event of A exactly once, byte-identical", () => {
    const own = historyEvents(path.join(a.historyDir, 'hermes'));
    expect(own.length).toBe(hooks.length);
    const atB = historyEvents(b.historyDir).filter(fromA);
    const ids = atB.map((e) => e.id as string).sort();
    expect(ids).toEqual(own.map((e) => e.id as string).sort());
    const byId = new Map(atB.map((e) => [e.id as string, JSON.stringify(e)]));
    for (const e of own) expect(byId.get(e.id as string)).toBe(JSON.stringify(e));
  });

  it("B's consumers got exactly what their filter and ceiling allow: the planted content only where no ceiling applies", async () => {
    const own = historyEvents(path.join(a.historyDir, 'hermes'));
    const ownKeys = (pick: (e: Record<string, any>) => boolean) => new Set(own.filter(pick).map((e) => `${e.source} ${e.id}`));
    await waitFor('consumers caught up', () =>
      new Set(bare.lines().map(keyOf)).size >= own.length && new Set(stored.eventLines().map(keyOf)).size >= own.length ? true : undefined,
    );
    // the filter: exactly A's tool events of the session (after dedupe: the link resends across the cut)
    expect(new Set(tools.lines().map(keyOf))).toEqual(ownKeys((e) => String(e.type).startsWith('tool.')));
    expect(new Set(bare.lines().map(keyOf))).toEqual(ownKeys(() => true));
    // the ceilings: metadata rewrites `capture`, none leaves the envelope alone; the planted text reaches neither
    for (const l of tools.lines()) expect(JSON.parse(l)).toMatchObject({ capture: expect.stringMatching(/^(metadata|none)$/) });
    for (const l of bare.lines()) expect(JSON.parse(l)).not.toHaveProperty('data');
    expect([...tools.lines(), ...bare.lines()].join('\n')).not.toContain(PLANT);
    // as stored (no ceiling) the content is there: the marker was really in the stream the ceilings filtered
    expect(stored.eventLines().join('\n')).toContain(PLANT);
  });

  it('A reconnected and says so in /healthz relay', async () => {
    const r = (await a.health()).relay as Record<string, unknown>;
    expect(r).toMatchObject({ connected: true, queued: 0, dropped_low: 0, dropped_notice: 0 });
    expect(r.reconnects as number).toBeGreaterThanOrEqual(1);
    expect(a.stderr()).not.toContain(TOKEN);
    expect(b.stderr()).not.toContain(TOKEN);
  });
});
