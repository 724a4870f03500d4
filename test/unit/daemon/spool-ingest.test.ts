import type { DurableLog } from '../../../src/bus/durable-log.js';
import { afterEach, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { chmodSync, existsSync, mkdirSync, readdirSync, renameSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { monotonicFactory } from 'ulid';
import { defaultPolicy } from '../../../src/capture/policy.js';
import { silentLogger } from '../../../src/core/logger.js';
import { createHookApp } from '../../../src/daemon/hook-app.js';
import type { SpoolIngest } from '../../../src/daemon/spool-ingest.js';
import { decode } from '../../../src/daemon/spool-format.js';
import { IdentityStage } from '../../../src/identity/identity-stage.js';
import { MemoryLog } from '../../support/in-process-daemon.js';
import { tempDir, waitFor } from '../../support/processes.js';
import { preToolCallBody } from '../../support/scripted-session.js';

const envelope = (callId: string, extra: Record<string, unknown> = {}) => preToolCallBody(callId, extra);

let pidSeq = 1000;
/** A spool file as the shim writes it: `<ms15>-<ns20>-<pid>-<rand>.hook`, header line, then the body bytes. */
function spoolFile(dir: string, arrivalMs: number, body: string | Buffer, o: { ns?: bigint; tmp?: boolean; header?: string } = {}): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const key = `${String(arrivalMs).padStart(15, '0')}-${(o.ns ?? 0n).toString().padStart(20, '0')}-${pidSeq++}-abc`;
  const bytes = Buffer.from(body);
  const header = o.header ?? JSON.stringify({ spool: 1, arrival: new Date(arrivalMs).toISOString(), arrival_ms: arrivalMs, bytes: bytes.length });
  const name = o.tmp ? `.${key}.tmp` : `${key}.hook`;
  writeFileSync(path.join(dir, name), Buffer.concat([Buffer.from(`${header}\n`), bytes]), { mode: 0o600 });
  return name;
}

const T = Date.parse('2026-11-30T10:00:00.000Z');

interface Gate {
  /** make the next ingests wait until `release()` */
  hold(): void;
  release(): void;
  /** the next ingest's events count as not written */
  failNext(): void;
}

const apps: { close(): Promise<unknown> }[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.close()));
});

function daemon(dir: string, maxBodyBytes = 1024 * 1024, seen?: Set<string>) {
  const policy = defaultPolicy({ home: '/home/dev' });
  const ulid = monotonicFactory();
  const identity = new IdentityStage({ epoch: 1, host: 'test-host', policy, newId: () => ulid() });
  const memory = new MemoryLog();
  let held: Promise<void> | undefined;
  let release = () => undefined as void;
  let fail = false;
  const gate: Gate = {
    hold: () => {
      held = new Promise<void>((r) => (release = r));
    },
    release: () => {
      release();
      held = undefined;
    },
    failNext: () => (fail = true),
  };
  // a durable log standing in for the history: its write settles when the gate opens; failNext refuses the next hook
  const gated: DurableLog = {
    name: 'gated',
    write: async (events) => {
      await held;
      return { written: events.length, retained: 0, lost: 0 };
    },
    refusal: () => {
      if (!fail) return undefined;
      fail = false;
      return 'EIO';
    },
    flush: async () => undefined,
    shutdown: async () => undefined,
    stats: () => ({}),
  };
  const { app, spool } = createHookApp({
    policy,
    identity,
    durable: [memory, gated],
    consumers: [],
    log: silentLogger,
    maxBodyBytes,
    spool: { dir, ...(seen ? { seen } : {}) },
  });
  const s = spool as SpoolIngest;
  apps.push({ close: async () => (await s.close(), await app.close()) });
  const callIds = () => memory.events.map((e) => (e.data.tool as { call_id: string }).call_id);
  const live = (callId: string) => app.inject({ method: 'POST', url: '/hook', payload: envelope(callId), headers: { 'content-type': 'application/json' } });
  const health = async () => (await app.inject({ method: 'GET', url: '/healthz' })).json().spool as Record<string, unknown>;
  return { app, spool: s, memory, gate, callIds, live, health };
}

const size = (f: string) => statSync(f, { throwIfNoEntry: false })?.size ?? 0;
const hookFiles = (dir: string) => readdirSync(dir).filter((f) => f.endsWith('.hook'));

describe('spool ingestion', () => {
  it("ingests every file in arrival (lexical) order, whatever order they were written in, at each hook's arrival time", async () => {
    const dir = path.join(tempDir(), 'spool');
    spoolFile(dir, T + 30, envelope('c3'));
    writeFileSync(path.join(dir, 'in.files'), '....');
    writeFileSync(path.join(dir, 'in.kib'), '....');
    spoolFile(dir, T + 10, envelope('c1'), { ns: 5n });
    spoolFile(dir, T + 10, envelope('c0'), { ns: 4n });
    spoolFile(dir, T + 20, envelope('c2'));
    const d = daemon(dir);
    await d.spool.start();
    expect(d.callIds()).toEqual(['c0', 'c1', 'c2', 'c3']);
    expect(d.memory.events.map((e) => e.time)).toEqual([T + 10, T + 10, T + 20, T + 30].map((t) => new Date(t).toISOString()));
    expect(d.memory.events.map((e) => e.seq)).toEqual([0, 1, 2, 3]);
    // each spooled event names its spool file (its key), so a restart can tell what was written
    expect(d.memory.events.map((e) => `${e.hermesspool}.hook`).every((k) => /^\d{15}-\d{20}-\d+-abc\.hook$/.test(k))).toBe(true);
    expect(hookFiles(dir)).toEqual([]);
    expect(await d.health()).toMatchObject({ ingested: 4, pending: 0, dropped: 0, rejected: 0, errors: 0, draining: false });
    // drained: the cap's ledgers are back to zero (see the close test for what is counted meanwhile)
    for (const f of ['in.files', 'in.kib', 'out.files', 'out.kib']) expect(size(path.join(dir, f)), f).toBe(0);
  });

  it('/hook answers 503 (before its body is read) until the spool is drained; then live hooks come after the spooled ones', async () => {
    const dir = path.join(tempDir(), 'spool');
    spoolFile(dir, T, envelope('spooled1'));
    spoolFile(dir, T + 1, envelope('spooled2'));
    const d = daemon(dir);
    expect((await d.live('early')).statusCode).toBe(503);
    d.gate.hold();
    const started = d.spool.start();
    await waitFor('files in hand', () => d.memory.events.length === 2);
    const r = await d.live('during');
    expect(r.statusCode).toBe(503);
    expect(r.json()).toMatchObject({ error: 'spool-draining' });
    expect((await d.health()).draining).toBe(true);
    d.gate.release();
    await started;
    expect((await d.live('after')).statusCode).toBe(200);
    expect(d.callIds()).toEqual(['spooled1', 'spooled2', 'after']);
  });

  it('a key is listed as published-but-not-deleted from its publication until its file is gone (what the start-up snapshot records, so a crash in between never ingests it twice)', async () => {
    const dir = path.join(tempDir(), 'spool');
    spoolFile(dir, T, envelope('held'));
    const d = daemon(dir);
    expect(d.spool.publishedNotDeleted()).toEqual([]);
    d.gate.hold();
    const started = d.spool.start();
    await waitFor('the hook published, its write held', () => d.memory.events.length === 1);
    const listed = d.spool.publishedNotDeleted();
    expect(listed).toHaveLength(1);
    expect(hookFiles(dir)).toEqual([`${listed[0]}.hook`]);
    d.gate.release();
    await started;
    expect(hookFiles(dir)).toEqual([]);
    expect(d.spool.publishedNotDeleted()).toEqual([]);
  });

  it('a file that appears after the drain is ingested before the next live hook (a shim that wrote it late)', async () => {
    const dir = path.join(tempDir(), 'spool');
    const d = daemon(dir);
    await d.spool.start();
    await d.live('live1');
    spoolFile(dir, Date.now(), envelope('straggler'));
    await d.live('live2');
    expect(d.callIds()).toEqual(['live1', 'straggler', 'live2']);
  });

  it('a late file with no hook after it is picked up by the watcher or the periodic scan', async () => {
    const dir = path.join(tempDir(), 'spool');
    const d = daemon(dir);
    await d.spool.start();
    spoolFile(dir, Date.now(), envelope('late'));
    await waitFor('late file ingested', () => d.callIds().includes('late'), 5_000);
    await waitFor('late file deleted', () => hookFiles(dir).length === 0, 5_000);
  });

  it('a corrupt, torn, oversized or invalid file is moved aside to rejected/ and counted; the rest still goes, in order', async () => {
    const dir = path.join(tempDir(), 'spool');
    const d = daemon(dir, 4096);
    spoolFile(dir, T + 0, envelope('ok0'));
    spoolFile(dir, T + 1, 'no header line at all', { header: 'garbage' });
    writeFileSync(path.join(dir, `${String(T + 2).padStart(15, '0')}-${'0'.padStart(20, '0')}-1-x.hook`), 'no newline anywhere');
    spoolFile(dir, T + 3, envelope('torn'), { header: JSON.stringify({ spool: 1, arrival: '', arrival_ms: T + 3, bytes: 9999 }) });
    spoolFile(dir, T + 4, '{"hook_event_name": ');
    spoolFile(dir, T + 5, '{"tool_name": "x"}');
    spoolFile(dir, T + 6, `${'['.repeat(70)}${']'.repeat(70)}`);
    spoolFile(dir, T + 7, envelope('big', { blob: 'b'.repeat(8192) }));
    spoolFile(dir, T + 8, envelope('ok1'));
    await d.spool.start();
    expect(d.callIds()).toEqual(['ok0', 'ok1']);
    expect(readdirSync(path.join(dir, 'rejected'))).toHaveLength(7);
    expect(statSync(path.join(dir, 'rejected')).mode & 0o777).toBe(0o700);
    expect(await d.health()).toMatchObject({ ingested: 2, rejected: 7, pending: 0 });
    expect(hookFiles(dir)).toEqual([]);
  });

  it('validates exactly as the HTTP surface: __proto__ / constructor.prototype keys are stripped, depth is bounded', () => {
    const body = '{"hook_event_name":"x","extra":{"__proto__":{"polluted":1},"constructor":{"prototype":{"p":1}},"ok":1}}';
    const buf = Buffer.from(`${JSON.stringify({ spool: 1, arrival: '', arrival_ms: T, bytes: Buffer.byteLength(body) })}\n${body}`);
    const { env, arrival } = decode(buf);
    expect(Object.hasOwn(env.extra!, '__proto__')).toBe(false);
    expect(Object.hasOwn(env.extra!, 'constructor')).toBe(false);
    expect(env.extra).toEqual({ ok: 1 });
    expect(arrival.getTime()).toBe(T);
  });

  it('a spooled body is held to the live node cap too (the same bounded parse as a POST)', () => {
    const body = envelope('capped');
    const buf = Buffer.from(`${JSON.stringify({ spool: 1, arrival: '', arrival_ms: T, bytes: Buffer.byteLength(body) })}\n${body}`);
    expect(decode(buf).env.hook_event_name).toBe('pre_tool_call');
    expect(() => decode(buf, { maxNodes: 3, maxDepth: 64 })).toThrow(/AEP_MAX_BODY_NODES/);
  });

  it('at start, waits for a shim still writing an EARLIER hook instead of overtaking it', async () => {
    const dir = path.join(tempDir(), 'spool');
    const tmp = spoolFile(dir, T, envelope('first'), { tmp: true });
    spoolFile(dir, T + 1, envelope('second'));
    const d = daemon(dir);
    const started = d.spool.start();
    await new Promise((r) => setTimeout(r, 100));
    expect(d.callIds()).toEqual([]);
    renameSync(path.join(dir, tmp), path.join(dir, `${tmp.slice(1, -'.tmp'.length)}.hook`));
    await started;
    expect(d.callIds()).toEqual(['first', 'second']);
  });

  it('a .tmp its shim abandoned (untouched for the stale time) is moved aside, never waited on forever', async () => {
    const dir = path.join(tempDir(), 'spool');
    const tmp = spoolFile(dir, T, envelope('dead'), { tmp: true });
    const old = new Date(Date.now() - 60_000);
    utimesSync(path.join(dir, tmp), old, old);
    spoolFile(dir, T + 1, envelope('alive'));
    const d = daemon(dir);
    await d.spool.start();
    expect(d.callIds()).toEqual(['alive']);
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    expect(await d.health()).toMatchObject({ rejected: 1 });
  });

  it('a file whose events could not be written is kept, counted, and ingested on a later pass', async () => {
    const dir = path.join(tempDir(), 'spool');
    spoolFile(dir, T, envelope('retry'));
    const d = daemon(dir);
    d.gate.failNext();
    await d.spool.start();
    expect(hookFiles(dir)).toEqual([]);
    expect(await d.health()).toMatchObject({ ingested: 1, errors: 1, last_error: 'log_refused: gated: EIO' });
  });

  it('close() stops after the batch in hand (64 files: one wait for the log); the rest stays for the next start', async () => {
    const dir = path.join(tempDir(), 'spool');
    for (let i = 0; i < 70; i++) spoolFile(dir, T + i, envelope(`c${i}`));
    const d = daemon(dir);
    d.gate.hold();
    const started = d.spool.start();
    await waitFor('a batch in hand', () => d.memory.events.length === 64);
    const closing = d.spool.close();
    d.gate.release();
    await closing;
    await started;
    expect(d.memory.events).toHaveLength(64);
    expect(hookFiles(dir)).toHaveLength(6);
    // what left the spool is counted in the out ledgers (one byte per file, one per KiB), freeing the shims' cap
    expect([size(path.join(dir, 'out.files')), size(path.join(dir, 'out.kib'))]).toEqual([64, 64]);
    expect((await d.live('closed')).statusCode).toBe(503);
  });

  it('a file whose events the log already holds (the previous process died before deleting it) is deleted, not ingested twice', async () => {
    const dir = path.join(tempDir(), 'spool');
    const done = spoolFile(dir, T, envelope('written-before-the-crash'));
    spoolFile(dir, T + 1, envelope('not-yet'));
    const seen = new Set([done.slice(0, -'.hook'.length)]);
    const d = daemon(dir, 1024 * 1024, seen);
    await d.spool.start();
    expect(d.callIds()).toEqual(['not-yet']);
    expect(d.memory.events[0]!.hermesspool).toMatch(/^\d{15}-\d{20}-\d+-abc$/);
    expect(hookFiles(dir)).toEqual([]);
    expect(await d.health()).toMatchObject({ ingested: 1, duplicates: 1 });
    // only files present at start can be in the log already
    expect(seen.size).toBe(0);
  });

  it('the spool dir is created 0700, and made private if it was looser', async () => {
    const base = tempDir();
    const fresh = path.join(base, 'a', 'spool');
    await daemon(fresh).spool.start();
    expect(statSync(fresh).mode & 0o777).toBe(0o700);
    const loose = path.join(base, 'b');
    mkdirSync(loose, { mode: 0o755 });
    chmodSync(loose, 0o755);
    await daemon(loose).spool.start();
    expect(statSync(loose).mode & 0o777).toBe(0o700);
  });

  it('once drained, the ledgers reset: counts left behind (a file removed by hand) are forgotten, so the cap heals; drops stay counted', async () => {
    const dir = path.join(tempDir(), 'spool');
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'in.files'), '.....');
    writeFileSync(path.join(dir, 'in.kib'), '.......');
    writeFileSync(path.join(dir, 'out.files'), '..');
    writeFileSync(path.join(dir, 'dropped'), '...');
    const d = daemon(dir);
    await d.spool.start();
    for (const f of ['in.files', 'in.kib', 'out.files', 'out.kib']) expect(size(path.join(dir, f)), f).toBe(0);
    expect(await d.health()).toMatchObject({ dropped: 3 });
  });

  it('property: any set of arrival keys, written in any order, comes out in key order', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.tuple(fc.integer({ min: 0, max: 50 }), fc.bigInt({ min: 0n, max: 10n ** 19n })), {
          minLength: 1,
          maxLength: 12,
          selector: ([ms, ns]) => `${ms}:${ns}`,
        }),
        async (keys) => {
          const dir = path.join(tempDir(), 'spool');
          keys.forEach(([ms, ns], i) => spoolFile(dir, T + ms, envelope(`k${i}`), { ns }));
          const d = daemon(dir);
          await d.spool.start();
          const order = keys
            .map(([ms, ns], i) => ({ i, key: `${String(T + ms).padStart(15, '0')}-${ns.toString().padStart(20, '0')}` }))
            .sort((a, b) => (a.key < b.key ? -1 : 1))
            .map((k) => `k${k.i}`);
          expect(d.callIds()).toEqual(order);
          expect(existsSync(dir) && hookFiles(dir)).toEqual([]);
        },
      ),
      { numRuns: 25 },
    );
  });
});
