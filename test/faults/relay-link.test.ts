import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyedSession, postHook } from '../support/hook-client.js';
import { startDaemonProcess, waitFor, type DaemonProcess } from '../support/processes.js';

const TOKEN = 'relay-fault-token-0123456789abcdef';

/** every event line under `dir` (all agents, any layout), parsed */
function historyEvents(dir: string): Record<string, any>[] {
  const out: Record<string, any>[] = [];
  const walk = (d: string) => {
    let names: string[];
    try {
      names = readdirSync(d);
    } catch {
      return;
    }
    for (const n of names) {
      const p = path.join(d, n);
      if (statSync(p).isDirectory()) walk(p);
      else if (n.endsWith('.jsonl')) for (const line of readFileSync(p, 'utf8').split('\n')) if (line) out.push(JSON.parse(line) as Record<string, any>);
    }
  };
  walk(dir);
  return out;
}

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
  const hooks = keyedSession(sid, 10);
  const fromA = (e: Record<string, any>) => String(e.source).startsWith('aep://daemon-a/');

  beforeAll(async () => {
    b = await startDaemonProcess({ AEP_TOKEN: TOKEN, AEP_SOURCE_HOST: 'daemon-b' });
    proxy = await cuttableProxy(Number(new URL(b.url).port));
    a = await startDaemonProcess({
      AEP_TOKEN: TOKEN,
      AEP_SOURCE_HOST: 'daemon-a',
      AEP_RELAY_URL: `ws://127.0.0.1:${proxy.port}/socket`,
      AEP_STREAM_HEARTBEAT_MS: '500',
    });
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

  it('A reconnected and says so in /healthz relay', async () => {
    const r = (await a.health()).relay as Record<string, unknown>;
    expect(r).toMatchObject({ connected: true, queued: 0, dropped_low: 0, dropped_notice: 0 });
    expect(r.reconnects as number).toBeGreaterThanOrEqual(1);
    expect(a.stderr()).not.toContain(TOKEN);
    expect(b.stderr()).not.toContain(TOKEN);
  });
});
