import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { monotonicFactory } from 'ulid';
import { defaultPolicy } from '../../../src/capture/policy.js';
import { silentLogger } from '../../../src/core/logger.js';
import { createHookApp, type HookApp } from '../../../src/daemon/hook-app.js';
import { IdentityStage } from '../../../src/identity/identity-stage.js';
import { JsonlHistorySink } from '../../../src/history/jsonl-history-sink.js';
import { FaultyDisk } from '../../support/faulty-fs.js';
import { JSON_WORKER } from '../../support/paths.js';
import { tempDir, waitFor } from '../../support/processes.js';
import { preToolCallBody } from '../../support/scripted-session.js';

const KEY_HEADER = 'x-hermes-aep-spool-key';
const key = (ms: number) => `${String(ms).padStart(15, '0')}-${'7'.padStart(20, '0')}-4242-abcd1234`;

/** The daemon's hook path in process, with the real history sink on a disk the test can fill, and the spool. */
function rig() {
  const root = tempDir();
  const spoolDir = path.join(root, 'spool');
  const disk = new FaultyDisk();
  const policy = defaultPolicy({ home: '/home/dev' });
  const ulid = monotonicFactory();
  const identity = new IdentityStage({ epoch: 1, host: 'h', policy, newId: () => ulid() });
  const history = new JsonlHistorySink(root, 1000, { open: disk.open, probeIntervalMs: 10 });
  const hook = createHookApp({
    policy,
    identity,
    durable: [history],
    consumers: [],
    log: silentLogger,
    maxBodyBytes: 1024 * 1024,
    jsonWorkerUrl: JSON_WORKER,
    spool: { dir: spoolDir },
  });
  const lines = () =>
    existsSync(path.join(root, 'hermes', 's1.jsonl'))
      ? readFileSync(path.join(root, 'hermes', 's1.jsonl'), 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as { type: string; hermesspool?: string; data: { tool?: { call_id?: string } } })
      : [];
  return { root, spoolDir, disk, history, hook, lines };
}

const post = (h: HookApp, body: string, k?: string) =>
  h.app.inject({ method: 'POST', url: '/hook', payload: body, headers: { 'content-type': 'application/json', ...(k ? { [KEY_HEADER]: k } : {}) } });

/** the spool file the shim writes under the key it sent */
function spool(dir: string, k: string, body: string, arrivalMs: number): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const bytes = Buffer.from(body);
  const header = JSON.stringify({ spool: 1, arrival: new Date(arrivalMs).toISOString(), arrival_ms: arrivalMs, bytes: bytes.length });
  const file = path.join(dir, `${k}.hook`);
  writeFileSync(file, Buffer.concat([Buffer.from(`${header}\n`), bytes]), { mode: 0o600 });
  return file;
}

describe('a hook whose write failed is never answered 200', () => {
  const open: ReturnType<typeof rig>[] = [];
  afterEach(async () => {
    for (const r of open.splice(0)) {
      await r.hook.spool?.close();
      await r.hook.app.close();
      await r.hook.bus.shutdown();
    }
  });
  const make = async () => {
    const r = rig();
    open.push(r);
    await r.hook.app.ready();
    await r.hook.spool!.start();
    return r;
  };

  it('retained (write failed, held in memory) → 503 so the transport spools it; its events land later carrying its spool key', async () => {
    const r = await make();
    expect((await post(r.hook, preToolCallBody('c0'), key(1))).statusCode).toBe(200);
    r.disk.remaining = 0;
    const k = key(Date.now());
    const res = await post(r.hook, preToolCallBody('c1'), k);
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ error: 'unavailable' });
    r.disk.remaining = Number.POSITIVE_INFINITY;
    const landed = await waitFor('retained events written', () => {
      const l = r.lines().filter((e) => e.data.tool?.call_id === 'c1');
      return l.length > 0 ? l : undefined;
    });
    expect(landed.every((e) => e.hermesspool === k)).toBe(true);
  });

  it('the spool re-delivery of a retained-then-written hook is recognised and not processed twice', async () => {
    const r = await make();
    expect((await post(r.hook, preToolCallBody('c0'), key(1))).statusCode).toBe(200);
    r.disk.remaining = 0;
    const k = key(Date.now());
    const body = preToolCallBody('c1');
    expect((await post(r.hook, body, k)).statusCode).toBe(503);
    // what the shim does on that 503: the hook goes to the spool under the key it sent
    const file = spool(r.spoolDir, k, body, Date.now());
    r.disk.remaining = Number.POSITIVE_INFINITY;
    await waitFor('spool file consumed', () => (existsSync(file) ? undefined : true));
    await r.history.flush();
    const c1 = r.lines().filter((e) => e.data.tool?.call_id === 'c1');
    expect(c1.length).toBeGreaterThan(0);
    expect(new Set(c1.map((e) => e.type)).size).toBe(c1.length);
    expect(r.hook.spool!.stats()).toMatchObject({ duplicates: 1, ingested: 0 });
  });

  it('a hook without a spool key whose write failed → 503, and its events are given up (never written later, so its re-delivery is not doubled)', async () => {
    const r = await make();
    expect((await post(r.hook, preToolCallBody('c0'))).statusCode).toBe(200);
    r.disk.remaining = 0;
    expect((await post(r.hook, preToolCallBody('c1'))).statusCode).toBe(503);
    r.disk.remaining = Number.POSITIVE_INFINITY;
    await waitFor('log recovers', () => (r.history.health() === undefined ? true : undefined));
    expect((await post(r.hook, preToolCallBody('c2'))).statusCode).toBe(200);
    await r.history.flush();
    expect(r.lines().filter((e) => e.data.tool?.call_id === 'c1')).toEqual([]);
    expect(r.history.stats()).toMatchObject({ retained: 0, dropped: expect.any(Number) });
    expect((r.history.stats().dropped as number) > 0).toBe(true);
  });
});
