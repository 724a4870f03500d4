// `hermes-aep tail` with no option, like tail(1): right after a turn it shows that turn's last events (10), then
// follows; against the real daemon process over its socket, and on the history alone when no daemon answers.
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI } from '../../support/paths.js';
import { hook, postHook } from '../../support/control-rig.js';
import { httpCall, startDaemonProcess, tempDir, waitFor, type DaemonProcess } from '../../support/processes.js';
import { scriptedSession } from '../../support/scripted-session.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((c) => c()));
});

/** `hermes-aep tail` running; its stdout lines so far; stopped (its own pid) after the test. */
function tail(args: string[], env: Record<string, string>): { lines: () => string[]; child: ChildProcess; stderr: () => string } {
  const child = spawn(process.execPath, [CLI, 'tail', ...args], { env: { ...process.env, NO_COLOR: '1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
  const exited = new Promise((r) => child.once('exit', r));
  cleanups.push(() => (child.exitCode === null && child.signalCode === null ? (child.kill('SIGTERM'), exited) : exited));
  return { lines: () => out.split('\n').filter(Boolean), child, stderr: () => err };
}

/** every event the daemon holds, in stream order (a replay-only GET /stream) */
async function held(d: DaemonProcess): Promise<string[]> {
  const r = await httpCall({ socketPath: d.socketPath }, { path: '/stream?from=all&live=0', headers: { host: 'localhost' } });
  return r.body
    .split('\n')
    .filter((l) => l.startsWith('data: '))
    .map((l) => l.slice(6));
}

async function scriptedTurn(d: DaemonProcess): Promise<void> {
  for (const e of scriptedSession('20261204_120000_recent').envelopes) {
    const r = await httpCall(
      { socketPath: d.socketPath },
      { method: 'POST', path: '/hook', headers: { host: 'localhost', 'content-type': 'application/json' }, body: JSON.stringify(e) },
    );
    expect(r.status).toBe(200);
  }
}

describe('hermes-aep tail with no option: the last 10 events, then live', () => {
  it('on a running daemon: the scripted turn’s last 10 events at once, then a new session’s first event', async () => {
    const d = await startDaemonProcess({ AEP_PORT: '' });
    cleanups.push(() => d.stop());
    await scriptedTurn(d);
    const before = await held(d);
    expect(before.length).toBeGreaterThan(10);
    const env = { AEP_STATE_DIR: d.stateDir };
    const rendered = tail([], env);
    const json = tail(['--json'], env);
    // exactly the last 10, as the stream carries them
    await waitFor('the recent context (--json)', () => json.lines().length >= 10 || undefined);
    expect(json.lines()).toEqual(before.slice(-10));
    await waitFor('the recent context (rendered)', () => rendered.lines().length >= 10 || undefined);
    const types = before.slice(-10).map((l) => (JSON.parse(l) as { type: string }).type);
    expect(rendered.lines()).toHaveLength(10);
    rendered.lines().forEach((l, i) => expect(l).toContain(` ${types[i]}`));
    // then live: a new session's start reaches both
    expect((await postHook(d.socketPath, hook('on_session_start', '20261204_120100_after'))).status).toBe(200);
    await waitFor('the live event (--json)', () => json.lines().length >= 11 || undefined);
    expect(JSON.parse(json.lines()[10]!)).toMatchObject({ type: 'session.started', session: '20261204_120100_after' });
    await waitFor('the live event (rendered)', () => rendered.lines().length >= 11 || undefined);
    expect(rendered.lines()[10]).toMatch(/session\.started/);
    expect(rendered.stderr()).toBe('');
  });

  it('-n 0: only new events; -n 3: the last 3', async () => {
    const d = await startDaemonProcess({ AEP_PORT: '' });
    cleanups.push(() => d.stop());
    await scriptedTurn(d);
    const before = await held(d);
    const env = { AEP_STATE_DIR: d.stateDir };
    const none = tail(['-n', '0', '--json'], env);
    const three = tail(['--lines', '3', '--json'], env);
    await waitFor('the last 3', () => three.lines().length >= 3 || undefined);
    expect(three.lines()).toEqual(before.slice(-3));
    // -n 0 subscribes live: posted until it shows one (it may not be subscribed yet when the first is posted)
    let n = 0;
    await waitFor('a live event in -n 0', async () => {
      if (none.lines().length > 0) return true;
      expect((await postHook(d.socketPath, hook('on_session_start', `20261204_120200_live${n++}`))).status).toBe(200);
      return undefined;
    });
    for (const l of none.lines()) expect(JSON.parse(l)).toMatchObject({ type: 'session.started' });
  });

  it('no daemon: the last 10 events of the history (in time order across files), then what is appended', async () => {
    const d = await startDaemonProcess({ AEP_PORT: '' });
    await scriptedTurn(d);
    const before = await held(d);
    await d.stop();
    const files = readdirSync(path.join(d.historyDir, 'hermes')).map((f) => path.join(d.historyDir, 'hermes', f));
    const all = files.flatMap((f) => readFileSync(f, 'utf8').split('\n').filter(Boolean));
    const last10 = [...all]
      .map((l, i) => ({ l, i, t: Date.parse((JSON.parse(l) as { time: string }).time) }))
      .sort((a, b) => a.t - b.t || a.i - b.i)
      .slice(-10);
    expect(before.length).toBeGreaterThan(10);
    const t = tail(['--json'], { AEP_STATE_DIR: tempDir(), AEP_LOG_DIR: d.historyDir });
    await waitFor('the recent context from the history', () => t.lines().length >= 10 || undefined);
    expect(new Set(t.lines())).toEqual(new Set(last10.map((x) => x.l)));
    // printed oldest first across the files
    const times = t.lines().map((l) => Date.parse((JSON.parse(l) as { time: string }).time));
    expect(times).toEqual([...times].sort((a, b) => a - b));
    expect(t.stderr()).toContain('no daemon stream');
    // appended: followed
    const extra = JSON.stringify({ ...(JSON.parse(last10.at(-1)!.l) as object), id: '01KZZZZZZZZZZZZZZZZZZZZZZZ', seq: 9_999 });
    appendFileSync(files[0]!, `${extra}\n`);
    await waitFor('the appended line', () => t.lines().includes(extra) || undefined);
  });
});
