import { afterEach, describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { httpCall, startDaemonProcess, tempDir, waitFor, type DaemonProcess } from '../../support/processes.js';
import { readLogs } from '../../support/stream-invariants.js';
import { decode } from '../../../src/daemon/spool-format.js';
import { pluginCopy, runHarness, type Call } from './support.js';

/** The forwarder plugin against the real daemon: order, drop reports in /healthz, the spool, TCP with the token. */
const TS = { telemetry_schema_version: 'hermes.observer.v1' };
const start = (session: string): Call => ({ hook: 'on_session_start', kwargs: { session_id: session, model: 'm', platform: 'cli', ...TS } });
const turn = (session: string, i: number): Call[] => [
  { hook: 'pre_llm_call', kwargs: { session_id: session, task_id: 't', turn_id: `${session}:t:${String(i).padStart(8, '0')}`, user_message: `m${i}`, ...TS } },
  { hook: 'on_session_end', kwargs: { session_id: session, task_id: 't', turn_id: `${session}:t:${String(i).padStart(8, '0')}`, completed: true, ...TS } },
];

let daemon: DaemonProcess | undefined;
afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
});

const events = (d: DaemonProcess) => [...readLogs(d.historyDir).values()].flat();
const settle = (d: DaemonProcess) => waitFor('daemon drained', async () => ((await d.health()).sinks.log.queued === 0 ? true : undefined));

describe('plugin transport → the real daemon', () => {
  it('a burst of 100 turns arrives whole and in order; the harness exits at once (the queue is flushed at exit)', async () => {
    daemon = await startDaemonProcess({ AEP_PORT: '' });
    const calls = [start('burst'), ...Array.from({ length: 100 }, (_, i) => turn('burst', i)).flat()];
    const r = await runHarness({ pluginDir: pluginCopy(['--state-dir', daemon.stateDir]), calls });
    expect([r.code, r.stdout, r.stderr, r.out.dropped]).toEqual([0, '', '', 0]);
    await settle(daemon);
    expect((await daemon.health()).hooks).toBe(201);
    const starts = events(daemon).filter((e) => e.type === 'run.started');
    expect(starts.map((e) => e.run)).toEqual(Array.from({ length: 100 }, (_, i) => `burst:t:${String(i).padStart(8, '0')}`));
  });

  it('queue full: the hooks that did not fit are dropped, counted, and the count reaches /healthz transport.plugin.dropped', async () => {
    daemon = await startDaemonProcess({ AEP_PORT: '' });
    const calls = Array.from({ length: 20 }, (_, i) => start(`drop-${i}`));
    // the worker stalls on its first delivery while the 20 calls fire into a queue of 3
    const r = await runHarness({ pluginDir: pluginCopy(['--state-dir', daemon.stateDir]), calls, queueMax: 3, holdLock: true });
    // no call waited for room, without a clock: the harness's own thread holds the delivery lock until every call has
    // returned, so a call that blocked on the full queue would never return (the harness is killed at 60 s, the test
    // times out at 30 s, vitest.config.ts)
    expect(r.out.results.every((x) => x.raised === null)).toBe(true);
    await settle(daemon);
    const h = await daemon.health();
    expect(r.out.dropped).toBeGreaterThanOrEqual(16);
    expect((h.hooks as number) + r.out.dropped).toBe(20);
    expect(h.transport.plugin).toEqual({ dropped: r.out.dropped, reports: 1, refused: 0 });
  });

  it('daemon down: each hook is spooled in the shim format (ledgers kept), and the next daemon ingests them in order', async () => {
    const dirs = { stateDir: path.join(tempDir(), 'state'), historyDir: path.join(tempDir(), 'log') };
    const calls = [start('spooled'), ...turn('spooled', 1), ...turn('spooled', 2)];
    const r = await runHarness({ pluginDir: pluginCopy(['--state-dir', dirs.stateDir]), calls });
    expect([r.code, r.stdout, r.stderr]).toEqual([0, '', '']);
    const spool = path.join(dirs.stateDir, 'spool');
    const files = readdirSync(spool)
      .filter((f) => f.endsWith('.hook'))
      .sort();
    expect(files).toHaveLength(5);
    const decoded = files.map((f) => decode(readFileSync(path.join(spool, f))));
    expect(decoded.map((d) => d.env.hook_event_name)).toEqual(calls.map((c) => c.hook));
    expect(statSync(path.join(spool, 'in.files')).size).toBe(5);
    expect(statSync(path.join(spool, 'in.kib')).size).toBe(5);
    expect(statSync(path.join(spool, files[0]!)).mode & 0o777).toBe(0o600);
    daemon = await startDaemonProcess({ AEP_PORT: '' }, dirs);
    await waitFor('spool ingested', async () => ((await daemon!.health()).spool?.ingested === 5 ? true : undefined));
    expect(events(daemon).map((e) => e.type)).toEqual(['session.started', 'run.started', 'run.finished', 'run.started', 'run.finished']);
    expect(readdirSync(spool).filter((f) => f.endsWith('.hook'))).toEqual([]);
  });

  it('spool cap: past AEP_SPOOL_MAX_FILES a hook is dropped and counted in spool/dropped, as the shim does', async () => {
    const state = path.join(tempDir(), 'state');
    const calls = [start('a'), start('b'), start('c')];
    await runHarness({ pluginDir: pluginCopy(['--state-dir', state]), calls, env: { AEP_SPOOL_MAX_FILES: '2' } });
    const spool = path.join(state, 'spool');
    expect(readdirSync(spool).filter((f) => f.endsWith('.hook'))).toHaveLength(2);
    expect(statSync(path.join(spool, 'dropped')).size).toBe(1);
  });

  it('post_api_request without its raw assistant_message (the plugin drops it) still maps to x.hermes.model.call, its output from the sanitized response', async () => {
    daemon = await startDaemonProcess({ AEP_PORT: '', AEP_CAPTURE: 'full' });
    const ids = { session_id: 'mc', task_id: 't', turn_id: 'mc:t:0a1b2c3d' };
    const calls: Call[] = [
      start('mc'),
      { hook: 'pre_llm_call', kwargs: { ...ids, user_message: 'hi', ...TS } },
      {
        hook: 'post_api_request',
        kwargs: {
          ...ids,
          api_request_id: 'r1',
          model: 'gpt-x',
          provider: 'custom',
          api_call_count: 1,
          finish_reason: 'stop',
          usage: { input_tokens: 12, output_tokens: 3 },
          response: { assistant_message: { role: 'assistant', content: 'hello there' } },
          assistant_message: { $py: 'Boom()' },
          ...TS,
        },
      },
      { hook: 'on_session_end', kwargs: { ...ids, completed: true, ...TS } },
    ];
    const r = await runHarness({ pluginDir: pluginCopy(['--state-dir', daemon.stateDir]), calls });
    expect([r.code, r.stdout, r.stderr, r.out.dropped]).toEqual([0, '', '', 0]);
    await settle(daemon);
    const call = events(daemon).find((e) => e.type === 'x.hermes.model.call');
    expect(call?.data).toMatchObject({ model: 'gpt-x', provider: 'custom', finish_reason: 'stop', output: { content: 'hello there' } });
    expect(JSON.stringify(call)).not.toContain('Boom');
  });

  it('TCP: the token from the state dir is sent (and only over TCP); a wrong token is refused, not spooled', async () => {
    daemon = await startDaemonProcess();
    const r = await runHarness({ pluginDir: pluginCopy(['--state-dir', daemon.stateDir, '--url', daemon.hookUrl]), calls: [start('tcp')] });
    expect(r.code).toBe(0);
    await settle(daemon);
    expect(events(daemon).map((e) => e.session)).toEqual(['tcp']);
    const wrong = tempDir();
    await runHarness({ pluginDir: pluginCopy(['--state-dir', wrong, '--url', daemon.hookUrl]), calls: [start('no-token')] });
    expect((await daemon.health()).transport.refused.token).toBe(1);
    expect(existsSync(path.join(wrong, 'spool'))).toBe(false);
  });
});

describe('the daemon reads drop reports strictly', () => {
  const envelope = JSON.stringify({ hook_event_name: 'on_session_start', tool_name: null, tool_input: null, session_id: 'd', cwd: '/', extra: {} });
  const post = (d: DaemonProcess, dropped: string) =>
    httpCall(
      { socketPath: d.socketPath },
      { method: 'POST', path: '/hook', headers: { host: 'localhost', 'content-type': 'application/json', 'x-hermes-aep-dropped': dropped }, body: envelope },
    );

  it.each(['-1', 'abc', '01', '1e3', '1, 2', '9999999999', '+5', '0x10', ''])('%j: 400, the hook is not processed, no count changes', async (bad) => {
    daemon ??= await startDaemonProcess({ AEP_PORT: '' });
    const before = await daemon.health();
    const r = await post(daemon, bad);
    expect(r.status).toBe(400);
    expect(JSON.parse(r.body).error).toBe('bad-drop-report');
    const after = await daemon.health();
    expect(after.hooks).toBe(before.hooks);
    expect(after.transport.plugin.dropped).toBe(before.transport.plugin.dropped);
    expect(after.transport.plugin.refused).toBe((before.transport.plugin.refused as number) + 1);
  });

  it('a valid count is added once its delivery is answered 200', async () => {
    daemon = await startDaemonProcess({ AEP_PORT: '' });
    expect((await post(daemon, '7')).status).toBe(200);
    expect((await post(daemon, '0')).status).toBe(200);
    expect((await daemon.health()).transport.plugin).toEqual({ dropped: 7, reports: 1, refused: 0 });
  });
});
