import { afterAll, describe, expect, it } from 'vitest';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { aepValidator } from '../support/aep-validator.js';
import { inProcessDaemon } from '../support/in-process-daemon.js';
import { CLI } from '../support/paths.js';
import { runShim, startDaemonProcess, tempDir, waitFor, type DaemonProcess } from '../support/processes.js';
import { scriptedSession, SENTINEL, type Envelope } from '../support/scripted-session.js';
import { readLogs, streamViolations, type Ev } from '../support/stream-invariants.js';
import { safeFileName } from '../../src/history/safe-file-name.js';
import { hookEnvelopeSchema } from '../../src/hermes/envelope.js';
import { freePort } from '../support/ports.js';

/**
 * The daemon stops (SIGTERM) or dies (kill -9) in the middle of a turn while
 * Hermes keeps firing hooks through the real shim. Every shim must answer `{}`
 * at once; once the daemon is back, the log must hold every event of every
 * hook, in arrival order, dense seq, each event timed at its hook's arrival,
 * and the spool must be empty.
 */

interface Fired {
  readonly index: number;
  /** wall clock just before the shim was spawned and just after it exited */
  readonly t0: number;
  readonly t1: number;
  readonly ms: number;
  readonly stdout: string;
  readonly code: number | null;
}

/** What one uninterrupted process makes of the script: per log file, each event's type and the hook it came from. */
async function reference(envelopes: readonly Envelope[]): Promise<Map<string, { type: string; hook: number }[]>> {
  const d = inProcessDaemon();
  const out = new Map<string, { type: string; hook: number }[]>();
  for (const [hook, env] of envelopes.entries()) {
    const before = d.memory.events.length;
    await d.pipeline.handle(hookEnvelopeSchema.parse(JSON.parse(JSON.stringify(env))));
    for (const ev of d.memory.events.slice(before)) {
      const file = `${safeFileName(ev.session)}.jsonl`;
      out.set(file, [...(out.get(file) ?? []), { type: ev.type, hook }]);
    }
  }
  return out;
}

const spoolFiles = (stateDir: string) => {
  try {
    return readdirSync(path.join(stateDir, 'spool')).filter((f) => f.endsWith('.hook') || f.endsWith('.tmp'));
  } catch {
    return [];
  }
};

const fileSize = (f: string) => {
  try {
    return statSync(f).size;
  } catch {
    return 0;
  }
};

/** the outage test's own timeout (vitest.config.ts's faults default), stated because the test relies on it */
const OUTAGE_TEST_MS = 120_000;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const fmt = (xs: number[]) => `median ${median(xs).toFixed(0)} ms, max ${Math.max(...xs).toFixed(0)} ms (n=${xs.length})`;

/** A session whose hooks are fired one at a time, as Hermes does, against a fixed port and state dir. */
class Session {
  readonly script;
  readonly fired: Fired[] = [];
  readonly base = tempDir('hermes-aep-fault-');
  readonly dirs = { historyDir: path.join(this.base, 'log'), stateDir: path.join(this.base, 'state') };
  readonly daemons: DaemonProcess[] = [];
  port = 0;
  next = 0;

  constructor(name: string) {
    this.script = scriptedSession(name);
  }

  async start(): Promise<DaemonProcess> {
    this.port ||= await freePort();
    const d = await startDaemonProcess({ AEP_PORT: String(this.port) }, this.dirs);
    this.daemons.push(d);
    return d;
  }

  /** Fire the next `n` hooks through the real shim, one after another. */
  async fire(n: number, env: Record<string, string> = {}): Promise<Fired[]> {
    const out: Fired[] = [];
    for (let k = 0; k < n && this.next < this.script.envelopes.length; k++) {
      const index = this.next++;
      const t0 = Date.now();
      const r = await runShim(JSON.stringify(this.script.envelopes[index]), {
        AEP_HOOK_URL: `http://127.0.0.1:${this.port}/hook`,
        AEP_STATE_DIR: this.dirs.stateDir,
        // far above what an answer "at once" takes: a shim that waited would show
        AEP_SHIM_TIMEOUT_MS: '10000',
        ...env,
      });
      const f = { index, t0, t1: Date.now(), ms: r.ms, stdout: r.stdout, code: r.code };
      this.fired.push(f);
      out.push(f);
    }
    return out;
  }

  get remaining(): number {
    return this.script.envelopes.length - this.next;
  }

  async settle(d: DaemonProcess): Promise<Record<string, any>> {
    return waitFor('spool drained and log written', async () => {
      const h = await d.health();
      return h.spool.pending === 0 && !h.spool.draining && h.sinks.log.queued === 0 ? h : undefined;
    });
  }

  /** The whole history against one uninterrupted process's: same events, same order, dense seq, arrival times. */
  async verify(): Promise<{ events: number }> {
    const logs = readLogs(this.dirs.historyDir);
    const ref = await reference(this.script.envelopes);
    expect([...logs.keys()].sort()).toEqual([...ref.keys()].sort());
    let total = 0;
    for (const [file, expected] of ref) {
      const got = logs.get(file)!;
      // every event of every hook, in arrival order
      expect(
        got.map((e) => e.type),
        file,
      ).toEqual(expected.map((e) => e.type));
      // dense seq inside each epoch (seq restarts at 0 in a new epoch)
      const byEpoch = new Map<number, number[]>();
      for (const e of got) byEpoch.set(e.epoch, [...(byEpoch.get(e.epoch) ?? []), e.seq]);
      for (const [epoch, seqs] of byEpoch) expect(seqs, `${file} epoch ${epoch}`).toEqual(seqs.map((_, i) => i));
      // each event is timed at its hook's arrival: inside that shim's run, whoever wrote it and when
      got.forEach((e: Ev, i) => {
        const f = this.fired.find((x) => x.index === expected[i]!.hook)!;
        const t = Date.parse(e.time);
        expect(t, `${file} #${i} ${e.type}`).toBeGreaterThanOrEqual(f.t0);
        expect(t, `${file} #${i} ${e.type}`).toBeLessThanOrEqual(f.t1);
      });
      const times = got.map((e) => Date.parse(e.time));
      expect(times, file).toEqual([...times].sort((a, b) => a - b));
      total += got.length;
    }
    expect(streamViolations(logs.get(`${safeFileName(this.script.session)}.jsonl`)!, { requireCauses: true })).toEqual([]);
    // every event, spooled ones with their `hermesspool` extension attribute included, is a valid AEP event
    const validate = aepValidator();
    const all = [...logs.values()].flat();
    expect(all.flatMap((e) => validate(e))).toEqual([]);
    expect(all.some((e) => typeof e.hermesspool === 'string')).toBe(true);
    expect(spoolFiles(this.dirs.stateDir)).toEqual([]);
    return { events: total };
  }

  async cleanup(): Promise<void> {
    for (const d of this.daemons) await d.kill();
  }
}

const sessions: Session[] = [];
afterAll(async () => {
  for (const s of sessions) await s.cleanup();
});

describe.each([
  ['stopped (SIGTERM)', 'stop'],
  ['killed (kill -9)', 'kill'],
] as const)('daemon %s mid-turn: nothing the shim saw is lost', (label, how) => {
  const s = new Session(`20261201_down_${how}`);
  sessions.push(s);
  // mid-turn: turn 1 open, call_err requested and not yet answered
  const cut = s.script.envelopes.findIndex((e) => e.hook_event_name === 'pre_tool_call' && e.extra.tool_call_id === 'call_err') + 1;
  const outage = 10;
  let live: Fired[] = [];
  let down: Fired[] = [];
  let restartMs = 0;
  let health: Record<string, any> = {};

  it(
    'hooks fired during the outage all answer {} at once and are spooled in arrival order',
    async () => {
      const a = await s.start();
      live = await s.fire(cut);
      await s.settle(a);
      if (how === 'stop') expect(await a.stop()).toBe(0);
      else await a.kill();
      // no waiting on anything, without a clock: each shim's deadline is past this test's own timeout, so a shim that
      // waited for it would fail the test by timing out
      down = await s.fire(outage, { AEP_SHIM_TIMEOUT_MS: String(2 * OUTAGE_TEST_MS) });
      expect(down.map((f) => [f.code, f.stdout])).toEqual(down.map(() => [0, '{}']));
      const files = spoolFiles(s.dirs.stateDir);
      expect(files).toHaveLength(outage);
      expect(files.every((f) => f.endsWith('.hook'))).toBe(true);
      // lexical order = firing order, and each file carries its hook's arrival time
      const sorted = [...files].sort();
      sorted.forEach((f, i) => {
        const text = readFileSync(path.join(s.dirs.stateDir, 'spool', f), 'utf8');
        const header = JSON.parse(text.slice(0, text.indexOf('\n'))) as { arrival_ms: number; arrival: string };
        expect(header.arrival_ms).toBeGreaterThanOrEqual(down[i]!.t0);
        expect(header.arrival_ms).toBeLessThanOrEqual(down[i]!.t1);
        expect(header.arrival).toBe(new Date(header.arrival_ms).toISOString());
        expect(JSON.parse(text.slice(text.indexOf('\n') + 1))).toEqual(s.script.envelopes[down[i]!.index]);
        expect(statSync(path.join(s.dirs.stateDir, 'spool', f)).mode & 0o777).toBe(0o600);
      });
      expect(statSync(path.join(s.dirs.stateDir, 'spool')).mode & 0o777).toBe(0o700);
    },
    OUTAGE_TEST_MS,
  );

  it('the restarted daemon ingests the spool before serving new hooks; the history is whole', async () => {
    const t0 = performance.now();
    const b = await s.start();
    health = await s.settle(b);
    restartMs = performance.now() - t0;
    expect(health.spool).toMatchObject({ ingested: outage, pending: 0, dropped: 0, rejected: 0, errors: 0 });
    await s.fire(s.remaining);
    await s.settle(b);
    expect(await b.stop()).toBe(0);
    const { events } = await s.verify();
    console.log(
      `[daemon-down, ${label}] shim live: ${fmt(live.map((f) => f.ms))}; during the outage (spooled): ${fmt(down.map((f) => f.ms))}; ` +
        `restart to spool drained (${outage} hooks): ${restartMs.toFixed(0)} ms; ${events} events verified`,
    );
  });
});

describe('hooks keep firing through a kill -9 and the restart', () => {
  const s = new Session('20261201_through_restart');
  sessions.push(s);

  it('every hook, whether live, refused, answered 503 while the spool drained, or late, lands once and in order', async () => {
    const a = await s.start();
    await s.fire(4);
    await a.kill();
    await s.fire(4);
    // the daemon comes back while Hermes keeps going: hooks hit it before it listens and while it drains
    const starting = s.start();
    let during = 0;
    let up = false;
    void starting.then(() => (up = true));
    while (!up && s.remaining > 2) during += (await s.fire(1)).length;
    const b = await starting;
    await s.fire(s.remaining);
    const h = await s.settle(b);
    expect(s.fired.every((f) => f.code === 0 && f.stdout === '{}')).toBe(true);
    expect(h.spool.ingested).toBeGreaterThanOrEqual(4);
    expect(await b.stop()).toBe(0);
    await s.verify();
    console.log(`[daemon-down, through restart] ${during} hooks fired while the daemon started; ${h.spool.ingested} ingested from the spool`);
  });
});

describe('the spool cap: excess hooks are dropped and counted, /healthz shows the count', () => {
  it('AEP_SPOOL_MAX_FILES: past the cap each hook is dropped and counted', async () => {
    const s = new Session('20261201_cap_files');
    sessions.push(s);
    s.port = await freePort(); // nothing listens: the daemon is down from the start
    const fired = await s.fire(6, { AEP_SPOOL_MAX_FILES: '3' });
    expect(fired.map((f) => f.stdout)).toEqual(fired.map(() => '{}'));
    expect(spoolFiles(s.dirs.stateDir)).toHaveLength(3);
    expect(fileSize(path.join(s.dirs.stateDir, 'spool', 'dropped'))).toBe(3);
    const d = await s.start();
    const h = await s.settle(d);
    expect(h.spool).toMatchObject({ ingested: 3, pending: 0, dropped: 3 });
    // the first three made it, in order; the rest never will
    const logs = readLogs(s.dirs.historyDir).get(`${safeFileName(s.script.session)}.jsonl`)!;
    // (the session start, the turn start, the turn's first model call)
    expect(logs.map((e) => e.type)).toEqual(['session.started', 'run.started', 'x.hermes.model.call']);
    // drained: the ledger is back to zero, so the next outage gets the whole cap again
    await d.stop();
    await s.fire(3, { AEP_SPOOL_MAX_FILES: '3' });
    expect(spoolFiles(s.dirs.stateDir)).toHaveLength(3);
    expect(fileSize(path.join(s.dirs.stateDir, 'spool', 'dropped'))).toBe(3);
  });

  it('AEP_SPOOL_MAX_BYTES: a hook that would pass the byte cap is dropped, smaller ones still fit', async () => {
    const s = new Session('20261201_cap_bytes');
    sessions.push(s);
    s.port = await freePort();
    const env = { AEP_SPOOL_MAX_BYTES: String(16 * 1024) };
    const small = JSON.stringify(s.script.envelopes[0]);
    const big = JSON.stringify({ ...s.script.envelopes[1], extra: { ...s.script.envelopes[1]!.extra, conversation_history: ['x'.repeat(20_000)] } });
    const shim = (body: string) => runShim(body, { AEP_HOOK_URL: `http://127.0.0.1:${s.port}/hook`, AEP_STATE_DIR: s.dirs.stateDir, ...env });
    expect((await shim(small)).stdout).toBe('{}');
    expect((await shim(big)).stdout).toBe('{}');
    expect((await shim(small)).stdout).toBe('{}');
    expect(spoolFiles(s.dirs.stateDir)).toHaveLength(2);
    const d = await s.start();
    const h = await s.settle(d);
    expect(h.spool).toMatchObject({ ingested: 2, dropped: 1 });
    await d.stop();
  });
});

describe.each([
  ['stopped (SIGTERM)', 'stop'],
  ['killed (kill -9)', 'kill'],
] as const)('the daemon %s while it drains a large spool', (label, how) => {
  it('the next process ingests the rest: every hook exactly once, in arrival order, at its arrival time', async () => {
    const s = new Session(`20261201_drain_${how}`);
    sessions.push(s);
    const N = 3000;
    const SESSIONS = 10;
    const dir = path.join(s.dirs.stateDir, 'spool');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const T = Date.now() - 60_000;
    const arrival = new Map<string, number>();
    for (let i = 0; i < N; i++) {
      const sid = `drain_${i % SESSIONS}`;
      const body = JSON.stringify({
        hook_event_name: 'pre_tool_call',
        tool_name: 'terminal',
        tool_input: { command: `step ${i}` },
        session_id: sid,
        cwd: '/tmp',
        extra: { telemetry_schema_version: SENTINEL, tool_call_id: `call_${i}`, turn_id: `${sid}:t:1` },
      });
      // the shim's format (test/integration/shim/spool.test.ts pins it): header line, then the envelope bytes
      const key = `${String(T + i).padStart(15, '0')}-${String(i).padStart(20, '0')}-${process.pid}-t`;
      writeFileSync(
        path.join(dir, `${key}.hook`),
        `${JSON.stringify({ spool: 1, arrival: new Date(T + i).toISOString(), arrival_ms: T + i, bytes: Buffer.byteLength(body) })}\n${body}`,
        { mode: 0o600 },
      );
      arrival.set(`call_${i}`, T + i);
    }
    // the first process is caught mid-drain: before it is ready (its listening line waits for the drain),
    // through its /healthz on the port it already holds
    s.port = await freePort();
    const a = spawn(process.execPath, [CLI, 'daemon'], {
      env: {
        ...process.env,
        AEP_HOST: '127.0.0.1',
        AEP_PORT: String(s.port),
        AEP_LOG_DIR: s.dirs.historyDir,
        AEP_STATE_DIR: s.dirs.stateDir,
        OTEL_TRACES_EXPORTER: 'none',
      },
      stdio: 'ignore',
    });
    const exited = new Promise<number | null>((r) => a.once('exit', (code) => r(code)));
    try {
      await waitFor(
        'drain under way',
        async () => {
          const h = await fetch(`http://127.0.0.1:${s.port}/healthz`)
            .then((r) => r.json() as Promise<Record<string, any>>)
            .catch(() => undefined);
          return h && h.spool.ingested >= 300 ? true : undefined;
        },
        60_000,
        5,
      );
    } finally {
      a.kill(how === 'stop' ? 'SIGTERM' : 'SIGKILL');
    }
    const code = await exited;
    if (how === 'stop') expect(code).toBe(0);
    const left = spoolFiles(s.dirs.stateDir).length;
    expect(left).toBeGreaterThan(0);
    const t0 = performance.now();
    const b = await s.start();
    const h = await s.settle(b);
    const drainMs = performance.now() - t0;
    expect(h.spool).toMatchObject({ pending: 0, rejected: 0, errors: 0 });
    expect(await b.stop()).toBe(0);
    expect(spoolFiles(s.dirs.stateDir)).toEqual([]);
    const logs = readLogs(s.dirs.historyDir);
    let total = 0;
    for (let k = 0; k < SESSIONS; k++) {
      const events = logs.get(`drain_${k}.jsonl`)!;
      const calls = events.map((e) => e.data.tool.call_id as string);
      // exactly once each, in arrival order
      expect(calls).toEqual(Array.from({ length: N / SESSIONS }, (_, j) => `call_${j * SESSIONS + k}`));
      for (const e of events) expect(Date.parse(e.time)).toBe(arrival.get(e.data.tool.call_id));
      const byEpoch = new Map<number, number[]>();
      for (const e of events) byEpoch.set(e.epoch, [...(byEpoch.get(e.epoch) ?? []), e.seq]);
      for (const seqs of byEpoch.values()) expect(seqs).toEqual(seqs.map((_, i) => i));
      total += events.length;
    }
    expect(total).toBe(N);
    console.log(
      `[daemon-down, ${label} mid-drain] ${N} spooled; ${N - left} deleted by the first process, ${left} left; the next process found ${h.spool.duplicates} already in the log ` +
        `(written, not yet deleted) and ingested ${h.spool.ingested} in ${drainMs.toFixed(0)} ms from spawn (${((h.spool.ingested / drainMs) * 1000).toFixed(0)} hooks/s incl. start)`,
    );
  });
});

/** Two hooks spooled while the daemon is down, then a daemon that ingests them; the files' bytes are kept for putting back. */
async function spooledThenIngested(session: string) {
  const s = new Session(session);
  sessions.push(s);
  s.port = await freePort();
  await s.fire(2);
  const dir = path.join(s.dirs.stateDir, 'spool');
  const kept = new Map(spoolFiles(s.dirs.stateDir).map((f) => [f, readFileSync(path.join(dir, f))]));
  expect(kept.size).toBe(2);
  const a = await s.start();
  await s.settle(a);
  return { s, dir, kept, a };
}

describe('a crash between writing a spooled hook and deleting its file', () => {
  it('the next start finds the file key in the log it replays and deletes the file instead of ingesting it again', async () => {
    const { s, dir, kept, a } = await spooledThenIngested('20261201_crash_window');
    await a.kill();
    // as if the process had died after the log write and before the deletes: the files are back
    for (const [f, bytes] of kept) writeFileSync(path.join(dir, f), bytes, { mode: 0o600 });
    const b = await s.start();
    const h = await s.settle(b);
    expect(h.spool).toMatchObject({ ingested: 0, duplicates: 2, pending: 0 });
    await b.stop();
    const events = readLogs(s.dirs.historyDir).get(`${safeFileName(s.script.session)}.jsonl`)!;
    expect(events.map((e) => e.type)).toEqual(['session.started', 'run.started']);
    expect(events.map((e) => `${e.hermesspool}.hook`).sort()).toEqual([...kept.keys()].sort());
    expect(spoolFiles(s.dirs.stateDir)).toEqual([]);
  });

  it('after a start from the snapshot: the keys it recorded as published-but-not-deleted are deleted, not ingested again', async () => {
    const { s, dir, kept, a } = await spooledThenIngested('20261201_crash_window_snap');
    // a clean stop writes the snapshot: its offsets cover the two hooks' events
    expect(await a.stop()).toBe(0);
    // as if a periodic snapshot had been captured while the two files were published and not yet deleted,
    // and the process had died right after it: the header names their keys, the files are back
    const snap = path.join(s.dirs.stateDir, 'snapshot');
    const b0 = readFileSync(snap);
    const nl = b0.indexOf(10);
    const header = JSON.parse(b0.toString('utf8', 0, nl)) as Record<string, unknown>;
    expect(header.spool_keys).toEqual([]);
    const keys = [...kept.keys()].map((f) => f.slice(0, -'.hook'.length));
    writeFileSync(snap, Buffer.concat([Buffer.from(`${JSON.stringify({ ...header, spool_keys: keys })}\n`), b0.subarray(nl + 1)]));
    for (const [f, bytes] of kept) writeFileSync(path.join(dir, f), bytes, { mode: 0o600 });
    const b = await s.start();
    const h = await s.settle(b);
    expect(h.snapshot).toMatchObject({ started_from: 'snapshot' });
    expect(h.spool).toMatchObject({ ingested: 0, duplicates: 2, pending: 0 });
    await b.stop();
    const events = readLogs(s.dirs.historyDir).get(`${safeFileName(s.script.session)}.jsonl`)!;
    expect(events.map((e) => e.type)).toEqual(['session.started', 'run.started']);
    expect(spoolFiles(s.dirs.stateDir)).toEqual([]);
  });
});
