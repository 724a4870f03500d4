import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { cardSpanId, toolSpanId } from '../../src/otel/ids.js';
import { CLI } from '../support/paths.js';
import { decodeResourceSpans, type DecodedSpan } from '../support/otlp-json.js';
import { tempDir, waitFor } from '../support/processes.js';
import type { Envelope } from '../support/scripted-session.js';
import { soakEnvelope, soakSession, soakSessionId, writeSoakHistory, type SoakHistory } from '../support/soak-history.js';
import { freePort } from '../support/ports.js';

/**
 * Restart to healthy took seconds under load, and 21.8 s after a 300k-event
 * soak with the default file exporter: every hook in that window is lost.
 * Here: 10,000 session logs holding 300,000 events, all touched within the
 * replay window, the `file` exporter on. The real daemon is healthy within
 * 1 s of its spawn after a SIGTERM (snapshot written at shutdown) and after a
 * kill -9 (the periodic snapshot plus the log past it), and it continues
 * exactly as a daemon that replayed the whole history: the same hooks after
 * the restart give the same events and spans (ids and clock aside).
 */
const SESSIONS = 10_000;
const BUDGET_MS = 1_000;
/**
 * The budget is relative to this machine: a restart may take at most this many times an EMPTY daemon's start
 * (spawn → healthy, same machine, same run, warm compile cache), and never less than BUDGET_MS. The 1 s was
 * set when an empty start took 0.4 s (docs/measured.md): 2.5x; on a machine where Node itself starts slower
 * the same code is judged by the same ratio instead of failing on the machine's speed.
 */
const EMPTY_RATIO = 2.5;
/** healthy-from-spawn is measured this many times per case; the median is judged (the machine is shared) */
const STARTS = 3;

interface Daemon {
  readonly child: ChildProcess;
  readonly port: number;
  readonly root: string;
  /** ms from spawn to the first /healthz answering ok */
  readonly healthyMs: number;
  health(): Promise<Record<string, any>>;
  post(env: Envelope): Promise<number>;
  stop(): Promise<number | null>;
  kill(): Promise<void>;
  stderr(): string;
}

function get(port: number, p: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: p, agent: false }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString('utf8')));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', () => resolve({ status: 0, body: '' }));
    req.end();
  });
}

/** Spawn the real daemon on `root` and time spawn → /healthz ok. */
async function startDaemon(root: string, env: Record<string, string> = {}): Promise<Daemon> {
  const port = await freePort();
  const stateDir = path.join(root, 'state');
  const t0 = performance.now();
  const child = spawn(process.execPath, [CLI, 'daemon'], {
    env: {
      ...process.env,
      AEP_HOST: '127.0.0.1',
      AEP_PORT: String(port),
      AEP_LOG_DIR: path.join(root, 'log'),
      AEP_STATE_DIR: stateDir,
      OTEL_TRACES_EXPORTER: 'file',
      OTEL_BSP_SCHEDULE_DELAY: '50',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  let healthyMs: number;
  for (;;) {
    const r = await get(port, '/healthz');
    if (r.status === 200 && (JSON.parse(r.body) as { ok?: boolean }).ok) {
      healthyMs = performance.now() - t0;
      break;
    }
    if (child.exitCode !== null) throw new Error(`daemon exited early: ${err}`);
    if (performance.now() - t0 > 300_000) throw new Error('daemon never became healthy');
    await new Promise((r) => setTimeout(r, 5));
  }
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  return {
    child,
    port,
    root,
    healthyMs,
    health: async () => JSON.parse((await get(port, '/healthz')).body) as Record<string, any>,
    post: (e) =>
      new Promise((resolve, reject) => {
        const body = JSON.stringify(e);
        const headers: Record<string, string | number> = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) };
        // the TCP transport may ask for the state dir's token
        const tokenFile = path.join(stateDir, 'hook-token');
        if (existsSync(tokenFile)) headers.authorization = `Bearer ${readFileSync(tokenFile, 'utf8').trim()}`;
        const req = request({ host: '127.0.0.1', port, path: '/hook', method: 'POST', agent, headers }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        });
        req.on('error', reject);
        req.end(body);
      }),
    stop: async () => {
      agent.destroy();
      if (child.exitCode !== null) return child.exitCode;
      child.kill('SIGTERM');
      return exited;
    },
    kill: async () => {
      agent.destroy();
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await exited;
      }
    },
    stderr: () => err,
  };
}

/**
 * Start `STARTS` times in a row on the same dirs and return the last daemon
 * and the median figure. Between starts the daemon is stopped the same way
 * as before the first (SIGTERM writes the same snapshot again; a kill -9 of a
 * daemon that saved nothing leaves the same snapshot and log tail), so every
 * start measures the same case.
 */
async function timedStarts(
  root: string,
  env: Record<string, string>,
  between: 'sigterm' | 'kill9',
): Promise<{ daemon: Daemon; medianMs: number; all: number[] }> {
  const all: number[] = [];
  for (let i = 0; ; i++) {
    const d = await startDaemon(root, env);
    all.push(Math.round(d.healthyMs));
    if (i === STARTS - 1) return { daemon: d, medianMs: [...all].sort((a, b) => a - b)[Math.floor(all.length / 2)]!, all };
    if (between === 'sigterm') expect(await d.stop()).toBe(0);
    else await d.kill();
  }
}

/** Wait until a daemon wrote every event and exported every span (the file stops growing). */
async function drained(d: Daemon): Promise<void> {
  await waitFor(
    'the log and the spans drained',
    async () => {
      const x = await d.health();
      return x.sinks.log.queued === 0 && x.sinks.otel.spans_queued === 0 ? true : undefined;
    },
    30_000,
  );
  let n = -1;
  await waitFor(
    'the spans file settled',
    async () => {
      await new Promise((r) => setTimeout(r, 200));
      const now = spansOf(d.root).length;
      const same = now === n;
      n = now;
      return same ? true : undefined;
    },
    30_000,
  );
}

const env = soakEnvelope;

/**
 * The hooks after the restart, in three parts: P1 and P2 go to the first
 * process after the graceful stop (P2 after its periodic snapshot, so only
 * the log holds it), P3 to the process after the kill -9. P2 leaves new
 * turns open that P3 closes, so the log past the periodic snapshot matters.
 */
function continuation(h: SoakHistory) {
  const cut = [...h.rest.entries()];
  const half = Math.floor(cut.length / 2);
  const fresh = (from: number, n: number) =>
    Array.from({ length: n }, (_, j) => ({ sid: soakSessionId(from + j), ...soakSession(soakSessionId(from + j), from + j) }));
  const n1 = fresh(SESSIONS, 40);
  const n2 = fresh(SESSIONS + 40, 12);
  const p1: Envelope[] = [];
  const p2: Envelope[] = [];
  const p3: Envelope[] = [];
  cut.slice(0, half).forEach(([, rest]) => p1.push(...rest));
  for (const s of n1) p1.push(...s.hooks);
  cut.slice(half).forEach(([, rest]) => p1.push(...rest.slice(0, 1)));
  // P2 (short: it must fit between two periodic snapshots): new sessions stop mid-turn, after a pre_tool_call of their second turn
  for (const s of n2) {
    const at = s.hooks.findIndex((x, i) => i > 12 && x.hook_event_name === 'pre_tool_call');
    p2.push(...s.hooks.slice(0, at + 1));
    p3.push(...s.hooks.slice(at + 1));
  }
  cut.slice(half).forEach(([, rest]) => p3.push(...rest.slice(1)));
  // ended sessions resumed: a new turn and a second finalize (no second session.ended)
  for (const sid of h.ended.slice(0, 30)) {
    const turn = `${sid}:task9:resumed0`;
    p3.push(env(sid, 'pre_llm_call', { turn_id: turn, user_message: 'again' }));
    p3.push(env(sid, 'pre_tool_call', { turn_id: turn, tool_call_id: 'call_again' }, { tool_name: 'terminal', tool_input: { command: 'ls' } }));
    p3.push(env(sid, 'post_tool_call', { turn_id: turn, tool_call_id: 'call_again', status: 'ok', result: 'r', duration_ms: 3 }, { tool_name: 'terminal' }));
    p3.push(env(sid, 'on_session_end', { turn_id: turn, completed: true, interrupted: false }));
    p3.push(env(sid, 'on_session_finalize', { reason: 'shutdown' }));
  }
  return { p1, p2, p3 };
}

type Ev = Record<string, any> & { id: string; session: string; epoch: number; type: string; time: string };

/** Events of `epoch` in every log, in file order then line order. */
function eventsOf(root: string, epoch: number): Ev[] {
  const dir = path.join(root, 'log', 'hermes');
  const out: Ev[] = [];
  for (const f of readdirSync(dir).sort()) {
    for (const l of readFileSync(path.join(dir, f), 'utf8').split('\n')) {
      if (!l.includes(`"epoch":${epoch},`)) continue;
      const e = JSON.parse(l) as Ev;
      if (e.epoch === epoch) out.push(e);
    }
  }
  return out;
}

/** Every span in the file exporter's output (rotated file first), in order. */
function spansOf(root: string): DecodedSpan[] {
  const file = path.join(root, 'log', 'otel', 'spans.jsonl');
  const out: DecodedSpan[] = [];
  for (const f of [`${file}.1`, file]) {
    if (!existsSync(f)) continue;
    for (const l of readFileSync(f, 'utf8').split('\n')) if (l) out.push(...decodeResourceSpans((JSON.parse(l) as { resourceSpans?: any[] }).resourceSpans));
  }
  return out;
}

/**
 * Events and spans with what legitimately differs between two processes fed
 * the same hooks made equal: the ids of events minted after the restart (and
 * the tool and card span ids derived from them) by order of appearance,
 * times after the restart (and latencies measured against them), and the epoch.
 */
function normalizer(events: readonly Ev[], sinceMs: number) {
  const names = new Map<string, string>();
  events.forEach((e, i) => {
    names.set(e.id, `N${i}`);
    names.set(toolSpanId(e.session, e.id), `T${i}`);
    names.set(cardSpanId(e.id), `C${i}`);
  });
  // latencies of cards answered after the restart are wall-clock differences too
  const ids = (s: string) =>
    s.replace(/[0-9A-Za-z]{16,26}/g, (m) => names.get(m) ?? m).replace(/"(aep\.attention\.)?(latency|after)_ms":\d+/g, '"$1$2_ms":"L"');
  const nanos = BigInt(sinceMs) * 1_000_000n;
  return {
    event: (e: Ev) => ids(JSON.stringify({ ...e, time: Date.parse(e.time) >= sinceMs ? 'T' : e.time, epoch: 'E' })),
    span: (s: DecodedSpan) => {
      const t = (v: string) => (BigInt(v) >= nanos ? 'T' : v);
      const attrs = (a: Record<string, unknown>) => ({ ...a, ...('aep.epoch' in a ? { 'aep.epoch': 'E' } : {}) });
      return ids(
        JSON.stringify({
          ...s,
          resource: undefined,
          startTimeUnixNano: t(s.startTimeUnixNano),
          endTimeUnixNano: t(s.endTimeUnixNano),
          attributes: attrs(s.attributes),
          events: s.events.map((e) => ({ ...e, attributes: attrs(e.attributes) })),
        }),
      );
    },
  };
}

describe('fast start: 10,000 session logs, 300,000 events, the file exporter on', () => {
  let h: SoakHistory;
  let root: string;
  let rootC: string;
  const figures: Record<string, unknown> = {};
  const alive: Daemon[] = [];

  beforeAll(async () => {
    root = tempDir('hermes-aep-fast-start-');
    const t0 = performance.now();
    h = writeSoakHistory({ root, sessions: SESSIONS });
    figures.generate_ms = Math.round(performance.now() - t0);
    figures.history = { files: h.files, events: h.events, mb: Math.round(h.bytes / 1e6) };
    expect(h.files).toBe(SESSIONS);
    expect(h.events).toBeGreaterThanOrEqual(300_000);
  }, 300_000);

  afterAll(async () => {
    for (const d of alive) await d.kill();
    console.log(
      `fast-start figures (load average ${os
        .loadavg()
        .map((x) => x.toFixed(1))
        .join(' ')}): ${JSON.stringify(figures)}`,
    );
    for (const r of [root, rootC]) if (r) rmSync(r, { recursive: true, force: true });
  });

  let b: Daemon;
  let epochB = 0;
  /** the budget this run judges by: max(BUDGET_MS, EMPTY_RATIO x an empty daemon's median start) */
  let budgetMs = BUDGET_MS;

  it('the yardstick: an empty daemon’s spawn → healthy on this machine', async () => {
    const empty = tempDir('hermes-aep-fast-start-empty-');
    try {
      // once to warm its compile cache, as the restarts below have theirs
      const first = await startDaemon(empty);
      expect(await first.stop()).toBe(0);
      const starts = await timedStarts(empty, {}, 'sigterm');
      expect(await starts.daemon.stop()).toBe(0);
      figures.empty_start_ms = starts.all;
      figures.empty_start_median_ms = starts.medianMs;
      budgetMs = Math.max(BUDGET_MS, Math.round(EMPTY_RATIO * starts.medianMs));
      figures.budget_ms = budgetMs;
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  }, 120_000);

  it('after a graceful stop: healthy within 1 s of the spawn (or 2.5x an empty start on a slower machine; the snapshot written at shutdown)', async () => {
    // the baseline: this history with no snapshot, the full replay
    const a = await startDaemon(root);
    alive.push(a);
    figures.full_replay_ms = Math.round(a.healthyMs);
    // (a daemon without the snapshot reports no snapshot block at all)
    expect((await a.health()).snapshot?.started_from ?? 'replay').toBe('replay');
    expect(await a.stop()).toBe(0);
    expect(a.stderr()).not.toMatch(/snapshot not written/);
    // the reference for what comes after: the same dirs, no snapshot (a copy: the snapshot names the logs' inodes)
    rootC = tempDir('hermes-aep-fast-start-ref-');
    cpSync(root, rootC, { recursive: true, preserveTimestamps: true });
    rmSync(path.join(rootC, 'state', 'snapshot'), { force: true });

    const starts = await timedStarts(root, { AEP_SNAPSHOT_INTERVAL_MS: '4000' }, 'sigterm');
    b = starts.daemon;
    alive.push(b);
    const health = await b.health();
    epochB = health.epoch as number;
    figures.after_sigterm_ms = starts.all;
    figures.after_sigterm_median_ms = starts.medianMs;
    figures.after_sigterm_speedup = `${(a.healthyMs / starts.medianMs).toFixed(1)}x`;
    expect(starts.medianMs).toBeLessThan(budgetMs);
    expect(health.snapshot).toMatchObject({ started_from: 'snapshot', replayed_events: 0 });
  }, 600_000);

  let c: Daemon;
  let parts: ReturnType<typeof continuation>;
  let spansAfterP2 = 0;

  it('after a kill -9: healthy within 1 s (or 2.5x an empty start; the periodic snapshot + the log past it)', async () => {
    parts = continuation(h);
    for (const e of parts.p1) expect(await b.post(e)).toBe(200);
    // a periodic snapshot covers P1; P2 follows at once, and the crash comes before the next one
    const saves = (await b.health()).snapshot.saves as number;
    await waitFor('a periodic snapshot after P1', async () => ((await b.health()).snapshot.saves > saves ? true : undefined), 30_000);
    const covered = (await b.health()).snapshot.saves as number;
    for (const e of parts.p2) expect(await b.post(e)).toBe(200);
    await drained(b);
    spansAfterP2 = spansOf(root).length;
    const before = (await b.health()).snapshot.saves as number;
    await b.kill();
    // (if the machine was too slow for P2 to fit between two snapshots, say so rather than test nothing)
    expect(before, 'P2 did not fit between two periodic snapshots').toBe(covered);
    // no periodic save in these processes: each leaves the same snapshot and log tail to the next
    const starts = await timedStarts(root, { AEP_SNAPSHOT_INTERVAL_MS: '600000' }, 'kill9');
    c = starts.daemon;
    alive.push(c);
    figures.after_kill9_ms = starts.all;
    figures.after_kill9_median_ms = starts.medianMs;
    figures.after_kill9_speedup = `${((figures.full_replay_ms as number) / starts.medianMs).toFixed(1)}x`;
    expect(starts.medianMs).toBeLessThan(budgetMs);
    const health = await c.health();
    expect(health.snapshot).toMatchObject({ started_from: 'snapshot' });
    // the log past the periodic snapshot was read back: P2's events
    expect(health.snapshot.replayed_events).toBeGreaterThan(0);
    figures.after_kill9_replayed = { files: health.snapshot.replayed_files, events: health.snapshot.replayed_events };
  }, 600_000);

  it('continues exactly as a daemon that replayed the whole history', async () => {
    // the reference: full replay, then the same hooks in the same order
    const ref = await startDaemon(rootC);
    alive.push(ref);
    figures.reference_full_replay_ms = Math.round(ref.healthyMs);
    const epochRef = (await ref.health()).epoch as number;
    // every history event is older than this; what the restarted processes mint is newer
    const since = h.lastMs + 1;
    for (const e of [...parts.p1, ...parts.p2]) expect(await ref.post(e)).toBe(200);
    await drained(ref);
    // P1 + P2: the process that started from the snapshot written at shutdown, and the reference
    const evB = eventsOf(root, epochB);
    const evRef = eventsOf(rootC, epochRef);
    expect(evB.length).toBeGreaterThan(1000);
    const nB = normalizer(evB, since);
    const nRef = normalizer(evRef, since);
    expect(evB.map(nB.event)).toEqual(evRef.map(nRef.event));
    const spansBeforeP3 = spansOf(rootC).length;
    expect(spansAfterP2).toBeGreaterThan(100);
    expect(spansOf(root).slice(0, spansAfterP2).map(nB.span).sort()).toEqual(spansOf(rootC).map(nRef.span).sort());

    // P3: the process started after the kill -9 (periodic snapshot + the log past it), and a reference
    // restarted the same way but with a full replay (its snapshot removed): both in a new epoch
    expect(await ref.stop()).toBe(0);
    rmSync(path.join(rootC, 'state', 'snapshot'), { force: true });
    const ref2 = await startDaemon(rootC);
    alive.push(ref2);
    figures.reference_full_replay_2_ms = Math.round(ref2.healthyMs);
    expect((await ref2.health()).snapshot).toMatchObject({ started_from: 'replay' });
    for (const e of parts.p3) {
      expect(await c.post(e)).toBe(200);
      expect(await ref2.post(e)).toBe(200);
    }
    await drained(c);
    await drained(ref2);
    const evC = eventsOf(root, (await c.health()).epoch as number);
    const evRef3 = eventsOf(rootC, (await ref2.health()).epoch as number);
    // P2's events (causes of P3's, and the tool spans they opened) were minted by each side's previous process
    const nC = normalizer([...evB, ...evC], since);
    const nRef3 = normalizer([...evRef, ...evRef3], since);
    expect(evC.length).toBeGreaterThan(500);
    expect(evC.map(nC.event)).toEqual(evRef3.map(nRef3.event));
    // seq starts again at 0 in the new epoch and only climbs, per session
    const seqs = new Map<string, number[]>();
    for (const e of evC) seqs.set(e.session, [...(seqs.get(e.session) ?? []), e.seq as number]);
    for (const s of seqs.values()) expect(s).toEqual(s.map((_, i) => i));
    expect(spansOf(root).slice(spansAfterP2).map(nC.span).sort()).toEqual(spansOf(rootC).slice(spansBeforeP3).map(nRef3.span).sort());

    // a run begun before the first restart, its tool open across it: ONE root span, with its real start
    const history = (sid: string) =>
      readFileSync(path.join(root, 'log', 'hermes', `${sid}.jsonl`), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Ev);
    const all = spansOf(root);
    let checked = 0;
    for (const [sid, rest] of [...h.rest.entries()].slice(0, 60)) {
      if (rest[0]!.extra.tool_call_id !== 'call_open') continue;
      const started = history(sid).find((e) => e.type === 'run.started' && e.epoch === 0 && e.run === rest[0]!.extra.turn_id)!;
      const roots = all.filter((s) => s.name === 'invoke_agent hermes' && s.attributes['aep.run_id'] === started.run);
      expect(roots).toHaveLength(1);
      expect(BigInt(roots[0]!.startTimeUnixNano)).toBe(BigInt(Date.parse(started.time)) * 1_000_000n);
      expect(roots[0]!.attributes['aep.start_unknown']).toBeUndefined();
      checked++;
    }
    expect(checked).toBeGreaterThan(0);
    // no span twice
    const ids = all.map((s) => s.spanId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(await c.stop()).toBe(0);
    expect(await ref2.stop()).toBe(0);
  }, 600_000);
});
