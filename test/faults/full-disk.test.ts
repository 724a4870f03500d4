import { existsSync, mkdirSync, readdirSync, readFileSync, unlinkSync } from 'node:fs';
import { Agent } from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventKey, keyedSession, postHook, type KeyedHook } from '../support/hook-client.js';
import { runShim, startDaemonProcess, tempDir, waitFor, type DaemonProcess } from '../support/processes.js';
import { safeFileName } from '../../src/history/safe-file-name.js';
import { pluginCopy, runHarness } from '../integration/plugin/support.js';
import { fill, mountTmpfs, umount } from '../support/tmpfs.js';

const FAILING = 'the event log cannot be written';
const RECOVERED = 'the event log is writable again';

interface FileView {
  readonly text: string;
  readonly keys: Set<string>;
  readonly seqs: number[];
  readonly invalid: number;
}

function readFiles(dir: string): Map<string, FileView> {
  const out = new Map<string, FileView>();
  for (const f of readdirSync(dir).filter((x) => x.endsWith('.jsonl'))) {
    const text = readFileSync(path.join(dir, f), 'utf8');
    const keys = new Set<string>();
    const seqs: number[] = [];
    let invalid = 0;
    for (const line of text.split('\n')) {
      if (!line) continue;
      try {
        const ev = JSON.parse(line) as { type: string; seq: number; data: Record<string, unknown> };
        keys.add(eventKey(ev));
        seqs.push(ev.seq);
      } catch {
        invalid++;
      }
    }
    out.set(f, { text, keys, seqs, invalid });
  }
  return out;
}

/** No torn line, ever: every file is empty or ends in '\n', and every line is an event. */
function expectWholeLines(files: Map<string, FileView>): void {
  for (const [name, f] of files) {
    expect({ name, endsInNewline: f.text === '' || f.text.endsWith('\n'), invalid: f.invalid }).toEqual({ name, endsInNewline: true, invalid: 0 });
  }
}

async function healthz(d: DaemonProcess): Promise<{ status: number; body: Record<string, any> }> {
  const r = await fetch(`${d.url}/healthz`);
  return { status: r.status, body: (await r.json()) as Record<string, any> };
}

const lines = (d: DaemonProcess, msg: string) =>
  d
    .stderr()
    .split('\n')
    .filter((l) => l.includes(msg));

const SESSIONS = 8;
const CALLS = 14;
/** hooks per session before the disk fills, while it is full, and after space came back */
const PHASES = [6, 14, 32 - 6 - 14] as const;

describe('a full log disk (a real tmpfs as AEP_LOG_DIR)', () => {
  const base = tempDir('hermes-aep-fulldisk-');
  const historyDir = path.join(base, 'log');
  const stateDir = path.join(base, 'state');
  const filler = path.join(historyDir, 'filler');
  let skip: string | undefined;
  let daemon: DaemonProcess | undefined;
  const agent = new Agent({ keepAlive: true, maxSockets: SESSIONS });
  const sessions = Array.from({ length: SESSIONS }, (_, s) => keyedSession(`full_${s}`, CALLS, 1500));
  const replies = new Map<KeyedHook, number>();

  /** send hooks [from, to) of every session: sessions at once, each in order */
  const phase = (from: number, to: number) =>
    Promise.all(
      sessions.map(async (hooks) => {
        for (const h of hooks.slice(from, to)) replies.set(h, (await postHook(daemon!.hookUrl, agent, h.body, daemon!.stateDir)).status);
      }),
    );

  beforeAll(() => {
    mkdirSync(historyDir);
    skip = mountTmpfs(historyDir, '4m');
    if (skip) console.log(`full-disk test skipped: ${skip}`);
  });
  afterAll(async () => {
    agent.destroy();
    await daemon?.stop();
    if (!skip) umount(historyDir);
  });

  it('no torn line ever; refused while full (/healthz 503 degraded, one stderr line); nothing answered is lost; resumes cleanly; nothing written is damaged', async (ctx) => {
    if (skip) return ctx.skip();
    // full capture, so each line carries its 1.5 KB payload and writes cross page boundaries
    daemon = await startDaemonProcess({ AEP_CAPTURE: 'full' }, { historyDir, stateDir });
    const hermes = path.join(historyDir, 'hermes');

    await phase(0, PHASES[0]);
    expect([...replies.values()].every((s) => s === 200)).toBe(true);
    const before = readFiles(hermes);
    expect(before.size).toBe(SESSIONS);

    fill(filler);
    await phase(PHASES[0], PHASES[0] + PHASES[1]);
    const failing = await waitFor('degraded', async () => {
      const h = await healthz(daemon!);
      return h.status === 503 ? h : undefined;
    });
    expect(failing.body).toMatchObject({ ok: false, status: 'degraded' });
    expect(failing.body.degraded).toEqual([{ sink: 'log', reason: expect.stringMatching(/^write failed: ENOSPC$/), since: expect.any(String) }]);
    const during = readFiles(hermes);
    expectWholeLines(during);
    // while failing, hooks are refused unprocessed: 503
    const refusedWhileFull = [...replies.values()].filter((s) => s === 503).length;
    expect(refusedWhileFull).toBeGreaterThan(0);
    // the hooks whose write failed came without a spool key (this raw client): not held, given up and answered 503, so a re-delivery is taken once
    expect(failing.body.sinks.log.retained).toBe(0);
    expect(failing.body.hooks_lost).toBeGreaterThan(0);
    expect(lines(daemon, FAILING)).toHaveLength(1);
    expect(JSON.parse(lines(daemon, FAILING)[0]!)).toMatchObject({ level: 'error', sink: 'log', reason: 'write failed: ENOSPC' });

    unlinkSync(filler);
    const ok = await waitFor('recovered', async () => {
      const h = await healthz(daemon!);
      return h.status === 200 ? h : undefined;
    });
    expect(ok.body).toMatchObject({ ok: true, status: 'ok', degraded: [] });
    expect(lines(daemon, RECOVERED)).toHaveLength(1);

    const sentAfter = sessions.flatMap((s) => s.slice(PHASES[0] + PHASES[1]));
    await phase(PHASES[0] + PHASES[1], PHASES[0] + PHASES[1] + PHASES[2]);
    expect(sentAfter.map((h) => replies.get(h))).toEqual(sentAfter.map(() => 200));

    const after = readFiles(hermes);
    expectWholeLines(after);
    const h = (await healthz(daemon)).body;
    const missing: string[] = [];
    for (const [hook, status] of replies) {
      const file = after.get(`${safeFileName(hook.session)}.jsonl`)!;
      // refused = never processed: its event must not exist
      if (status === 503) expect(file.keys.has(hook.key)).toBe(false);
      // answered = in the file: the hooks whose write failed were retained and written first on recovery
      else if (!file.keys.has(hook.key)) missing.push(`${hook.session} ${hook.key}`);
    }
    expect(missing).toEqual([]);
    expect(h).toMatchObject({ hooks_retained: 0, sinks: { log: { retained: 0, queued: 0 } } });
    // every 503 is a hook refused unprocessed, or one whose write failed and was given up (counted): never written
    expect((h.hooks_refused as number) + (h.hooks_lost as number)).toBe([...replies.values()].filter((s) => s === 503).length);
    // what was written before the disk filled is untouched, and every seq still rises
    for (const [name, f] of before) expect(after.get(name)!.text.startsWith(f.text)).toBe(true);
    for (const f of after.values()) expect(f.seqs).toEqual([...f.seqs].sort((a, b) => a - b));
    // writing resumed: every hook after recovery is in its file
    for (const hook of sentAfter) expect(after.get(`${safeFileName(hook.session)}.jsonl`)!.keys.has(hook.key)).toBe(true);
    // still one line each: no flapping, nothing per event
    expect(lines(daemon, FAILING)).toHaveLength(1);
    expect(lines(daemon, RECOVERED)).toHaveLength(1);
  });
});

describe('a log dir already full at start', () => {
  const base = tempDir('hermes-aep-fullstart-');
  const historyDir = path.join(base, 'log');
  let skip: string | undefined;
  let daemon: DaemonProcess | undefined;

  beforeAll(() => {
    mkdirSync(historyDir);
    skip = mountTmpfs(historyDir, '1m');
    if (skip) console.log(`full-at-start test skipped: ${skip}`);
  });
  afterAll(async () => {
    await daemon?.stop();
    if (!skip) umount(historyDir);
  });

  it('starts degraded (503, one stderr line) and refuses hooks unprocessed; ok once space returns', async (ctx) => {
    if (skip) return ctx.skip();
    fill(path.join(historyDir, 'filler'));
    daemon = await startDaemonProcess({}, { historyDir, stateDir: path.join(base, 'state') });
    const h = await healthz(daemon);
    // the Hermes history and the ingest history (other emitters' events, {AEP_LOG_DIR}/ingest) share the full disk: both say so
    expect(h).toMatchObject({
      status: 503,
      body: {
        ok: false,
        status: 'degraded',
        degraded: [
          { sink: 'log', reason: 'write failed: ENOSPC' },
          { sink: 'ingest_log', reason: 'write failed: ENOSPC' },
        ],
      },
    });
    expect(lines(daemon, FAILING)).toHaveLength(1);
    expect(lines(daemon, 'the ingest log cannot be written')).toHaveLength(1);
    const [hook] = keyedSession('start_full', 1);
    expect((await postHook(daemon.hookUrl, false, hook!.body, daemon.stateDir)).status).toBe(503);
    unlinkSync(path.join(historyDir, 'filler'));
    await waitFor('recovered', async () => ((await healthz(daemon!)).status === 200 ? true : undefined));
    expect((await postHook(daemon.hookUrl, false, hook!.body, daemon.stateDir)).status).toBe(200);
    const files = readFiles(path.join(historyDir, 'hermes'));
    expect([...files.get('start_full.jsonl')!.keys]).toEqual([hook!.key]);
    expect(lines(daemon, RECOVERED)).toHaveLength(1);
    expect((await healthz(daemon)).body).toMatchObject({ hooks_refused: 1, hooks: 2, identity: { events: 1 } });
  });
});

describe('a full state dir (a real tmpfs as AEP_STATE_DIR)', () => {
  const base = tempDir('hermes-aep-fullstate-');
  const stateDir = path.join(base, 'state');
  let skip: string | undefined;

  beforeAll(() => {
    mkdirSync(stateDir);
    skip = mountTmpfs(stateDir, '1m');
    if (skip) console.log(`full-state-dir test skipped: ${skip}`);
  });
  afterAll(() => {
    if (!skip) umount(stateDir);
  });

  it('the daemon refuses to start, keeps the old epoch, and leaves no epoch.<pid>.tmp behind', async (ctx) => {
    if (skip) return ctx.skip();
    const historyDir = path.join(base, 'log');
    const first = await startDaemonProcess({}, { historyDir, stateDir });
    expect(await first.stop()).toBe(0);
    expect(readFileSync(path.join(stateDir, 'epoch'), 'utf8')).toBe('0\n');
    // what the first run left (epoch, the token, the spool dir): the refused start must add nothing to it
    const before = readdirSync(stateDir).sort();
    fill(path.join(stateDir, 'filler'));
    const err = await startDaemonProcess({}, { historyDir, stateDir }).then(
      async (d) => {
        await d.stop();
        return undefined;
      },
      (e: unknown) => e as Error,
    );
    expect(err?.message).toMatch(/daemon exited early \(1\).*ENOSPC/s);
    expect(readdirSync(stateDir).sort()).toEqual([...before, 'filler'].sort());
    expect(readFileSync(path.join(stateDir, 'epoch'), 'utf8')).toBe('0\n');
    expect(existsSync(path.join(stateDir, 'filler'))).toBe(true);
  });
});

describe('a full state disk: the shim cannot spool, and counts the drop anyway', () => {
  const base = tempDir('hermes-aep-fullspool-');
  const stateDir = path.join(base, 'state');
  let skip: string | undefined;
  let daemon: DaemonProcess | undefined;

  beforeAll(() => {
    mkdirSync(stateDir);
    skip = mountTmpfs(stateDir, '1m');
    if (skip) console.log(`full-state-spool test skipped: ${skip}`);
  });
  afterAll(async () => {
    await daemon?.kill();
    if (!skip) umount(stateDir);
  });

  it('every hook the shim could not spool shows in /healthz spool.dropped once the daemon is back', async (ctx) => {
    if (skip) return ctx.skip();
    // no daemon (a full state disk stops it from starting), no spool dir yet, not one free page
    fill(path.join(stateDir, 'filler'));
    const env = { AEP_SOCKET: path.join(stateDir, 'hook.sock'), AEP_STATE_DIR: stateDir };
    const hooks = keyedSession('full_state_spool', 1);
    for (const h of hooks) {
      const r = await runShim(h.body, env);
      // fails open: Hermes gets {} and the hook goes on
      expect(r.stdout).toBe('{}');
      expect(r.code).toBe(0);
    }
    // the plugin transport (Python) spools as the shim does, and counts its drop the same way
    const plugin = await runHarness({
      pluginDir: pluginCopy(['--state-dir', stateDir, '--socket', path.join(stateDir, 'hook.sock')]),
      env: { AEP_HERMES_CONTROL: '', AEP_INSTRUCT: '', AEP_ATTENTION_TIMEOUT_MS: '' },
      calls: [{ hook: 'on_session_start', kwargs: { session_id: 'full_state_plugin', model: 'm', platform: 'cli' } }],
    });
    expect(plugin.out.results[0]).toMatchObject({ raised: null });
    const dropped = hooks.length + 1;
    expect(readdirSync(path.join(stateDir, 'spool')).filter((f) => f.endsWith('.hook'))).toEqual([]);
    // space back: the daemon starts, and where a user looks, every dropped hook is counted
    unlinkSync(path.join(stateDir, 'filler'));
    daemon = await startDaemonProcess({ AEP_PORT: '' }, { historyDir: path.join(base, 'log'), stateDir });
    expect((await daemon.health()).spool.dropped).toBe(dropped);
    // the shims' per-hook markers folded into the one ledger, the count unchanged
    const spool = path.join(stateDir, 'spool');
    await waitFor('drop markers folded', () => (readdirSync(spool).some((f) => f.startsWith('dropped.')) ? undefined : true));
    expect(readFileSync(path.join(spool, 'dropped'), 'utf8')).toBe('.'.repeat(dropped));
    expect((await daemon.health()).spool.dropped).toBe(dropped);
    expect(await daemon.stop()).toBe(0);
  });
});
