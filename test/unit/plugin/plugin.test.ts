import { afterEach, describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../../support/paths.js';
import { tempDir } from '../../support/processes.js';
import { REGISTERED_HOOKS } from '../../../src/hermes/envelope.js';
import { decode } from '../../../src/daemon/spool-format.js';
import { fakeDaemon, kwargsOf, pluginCopy, runHarness, type FakeDaemon } from './support.js';

/**
 * The forwarder plugin (plugin/hermes-aep) against a stand-in daemon on a Unix socket: the bytes it sends are the
 * bytes the REAL Hermes wrote to its shell hooks (fixtures/hermes-recorded*), in order; replies reach Hermes only
 * through the gate, translated as Hermes's shell-hook path does; every failure is contained.
 */
const SETS = [path.join(ROOT, 'fixtures', 'hermes-recorded', 'raw'), path.join(ROOT, 'fixtures', 'hermes-recorded-0.19.0', 'raw')];
const TS = { telemetry_schema_version: 'hermes.observer.v1' };
const PRE_TOOL = { tool_name: 'terminal', args: { command: 'ls' }, task_id: 't', session_id: 's1', tool_call_id: 'c1', turn_id: 's1:t:0a1b2c3d', ...TS };
const PRE_LLM = { session_id: 's1', task_id: 't', turn_id: 's1:t:0a1b2c3d', user_message: 'hi', conversation_history: [], is_first_turn: true, ...TS };

let fake: FakeDaemon | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

describe('plugin transport: the envelope bytes', () => {
  it.each(SETS)('every envelope Hermes recorded (%s) is sent byte for byte, in order, with nothing printed', async (dir) => {
    fake = await fakeDaemon();
    const cwd = tempDir('hermes-aep-cwd-');
    const want: string[] = [];
    const calls = readdirSync(dir)
      .filter((f) => f.endsWith('.jsonl'))
      .sort()
      .flatMap((f) => readFileSync(path.join(dir, f), 'utf8').split('\n').filter(Boolean))
      .map((line) => {
        const env = JSON.parse(line);
        // the recorded run's working directory is not this one: the same bytes, with the harness's cwd
        want.push(line.replace(`"cwd": ${JSON.stringify(env.cwd)}`, `"cwd": ${JSON.stringify(cwd)}`));
        return { hook: env.hook_event_name, kwargs: kwargsOf(env) };
      });
    expect(calls.length).toBeGreaterThan(100);
    const r = await runHarness({ pluginDir: pluginCopy(['--socket', fake.socket]), calls, cwd });
    // the harness exits right after the last call: what was queued is delivered at exit (atexit)
    expect(fake.bodies.map((b) => b.toString('utf8'))).toEqual(want);
    expect([r.code, r.stdout, r.stderr]).toEqual([0, '', '']);
    expect(r.out.results.every((x) => x.ret === null && x.raised === null)).toBe(true);
    expect(r.out.hooks).toEqual([...REGISTERED_HOOKS].sort());
  });

  it("non-JSON values go through default=str; tool_input is null when args is not a dict; session_id falls back to the parent's, then ''", async () => {
    fake = await fakeDaemon();
    const cwd = tempDir('hermes-aep-cwd-');
    const r = await runHarness({
      pluginDir: pluginCopy(['--socket', fake.socket]),
      cwd,
      calls: [
        {
          hook: 'post_tool_call',
          kwargs: { tool_name: 'x', args: 'not a dict', session_id: '', parent_session_id: 'p', n: { $py: "decimal.Decimal('1.50')" }, ü: 'ß ✓' },
        },
        { hook: 'on_session_end', kwargs: { p: { $py: "pathlib.Path('/a b')" } } },
      ],
    });
    expect(r.code).toBe(0);
    expect(fake.bodies.map((b) => b.toString('utf8'))).toEqual([
      `{"hook_event_name": "post_tool_call", "tool_name": "x", "tool_input": null, "session_id": "p", "cwd": ${JSON.stringify(cwd)}, "extra": {"n": "1.50", "ü": "ß ✓"}}`,
      `{"hook_event_name": "on_session_end", "tool_name": null, "tool_input": null, "session_id": "", "cwd": ${JSON.stringify(cwd)}, "extra": {"p": "/a b"}}`,
    ]);
  });
});

describe('plugin transport: the gate', () => {
  it('gate off: a gated hook does not wait for the reply and returns None, whatever the daemon would answer', async () => {
    // the stand-in never answers: a callback that waited would take the whole 5 s timeout
    fake = await fakeDaemon(() => undefined);
    const r = await runHarness({ pluginDir: pluginCopy(['--socket', fake.socket]), calls: [{ hook: 'pre_tool_call', kwargs: PRE_TOOL }] });
    expect(fake.bodies).toHaveLength(1);
    expect(r.out.results[0]).toMatchObject({ ret: null, raised: null });
    expect(r.out.results[0]!.ms).toBeLessThan(100);
  });

  it.each([
    ['pre_tool_call', '{"action":"block","message":"no"}', { action: 'block', message: 'no' }],
    ['pre_tool_call', '{"decision":"block","reason":"because"}', { action: 'block', message: 'because' }],
    ['pre_tool_call', '{"action":"block"}', { action: 'block', message: 'Blocked by shell hook.' }],
    ['pre_tool_call', '{"context":"x"}', null],
    ['pre_tool_call', '[1]', null],
    ['pre_tool_call', 'not json', null],
    ['pre_llm_call', '{"context":"remember this"}', { context: 'remember this' }],
    ['pre_llm_call', '{"context":"  "}', null],
    ['pre_llm_call', '{}', null],
  ] as const)('gate on: %s answered %s reaches Hermes as %j', async (hook, body, want) => {
    fake = await fakeDaemon((_b, res) => res.end(body));
    const r = await runHarness({
      pluginDir: pluginCopy(['--socket', fake.socket]),
      env: { AEP_HERMES_CONTROL: 'on' },
      calls: [{ hook, kwargs: hook === 'pre_tool_call' ? PRE_TOOL : PRE_LLM }],
    });
    expect(r.out.results[0]!.ret).toEqual(want);
  });

  it('gate on: observation hooks still never wait; a gated hook fails open at AEP_SHIM_TIMEOUT_MS', async () => {
    fake = await fakeDaemon((b, res) => {
      if (!b.toString().includes('"pre_tool_call"')) res.end('{}'); // pre_tool_call is never answered
    });
    const r = await runHarness({
      pluginDir: pluginCopy(['--socket', fake.socket]),
      env: { AEP_HERMES_CONTROL: '1', AEP_SHIM_TIMEOUT_MS: '400' },
      calls: [
        { hook: 'on_session_start', kwargs: { session_id: 's1', ...TS } },
        { hook: 'pre_tool_call', kwargs: PRE_TOOL },
      ],
    });
    const [obs, gated] = r.out.results;
    expect(obs!.ms).toBeLessThan(100);
    expect(gated).toMatchObject({ ret: null, raised: null });
    expect(gated!.ms).toBeGreaterThanOrEqual(390);
    expect(gated!.ms).toBeLessThan(2_000);
  });
});

describe('plugin transport: failures stay inside the plugin', () => {
  it('a value whose str() raises, a daemon that resets the connection: no exception reaches Hermes; the worker lives on', async () => {
    let n = 0;
    fake = await fakeDaemon((_b, res) => {
      if (n++ === 0) res.socket?.destroy();
      else res.end('{}');
    });
    const r = await runHarness({
      pluginDir: pluginCopy(['--socket', fake.socket]),
      env: { AEP_HERMES_CONTROL: 'on' },
      calls: [
        { hook: 'on_session_start', kwargs: { session_id: 's1', bad: { $py: 'Boom()' } } },
        { hook: 'on_session_start', kwargs: { session_id: 'reset' }, drain: true },
        { hook: 'pre_tool_call', kwargs: PRE_TOOL },
      ],
    });
    expect([r.code, r.stdout, r.stderr]).toEqual([0, '', '']);
    expect(r.out.results.map((x) => x.raised)).toEqual([null, null, null]);
    expect(r.out.worker_alive).toBe(true);
    // the unserialisable one counts as dropped (reported to the daemon with the next delivery)
    expect(r.out.dropped).toBe(1);
    expect(fake.headers.map((h) => h['x-hermes-aep-dropped'])).toEqual(['1', '1']);
    // the unserialisable one never left; the reset one was sent (not spooled: it may have been taken); the last arrived
    expect(fake.bodies.map((b) => JSON.parse(b.toString()).session_id)).toEqual(['reset', 's1']);
    expect(readdirSync(fake.stateDir).filter((f) => f === 'spool')).toEqual([]);
  });
});

describe('plugin transport: exit', () => {
  it('Hermes 0.19.0 `-z` exits by logging.shutdown() + os._exit(0), skipping atexit: what is still queued arrives (or is spooled), in order', async () => {
    // a daemon that takes ~2 ms per hook: 300 hooks fired in a burst cannot have been delivered when the harness exits
    fake = await fakeDaemon((_b, res) => setTimeout(() => res.end('{}'), 2));
    const state = tempDir('hermes-aep-state-');
    const calls = Array.from({ length: 300 }, (_, i) => ({ hook: 'on_session_start', kwargs: { session_id: `s${i}`, ...TS } }));
    const r = await runHarness({ pluginDir: pluginCopy(['--state-dir', state, '--socket', fake.socket]), calls, hardExit: true });
    expect([r.code, r.stdout, r.stderr]).toEqual([0, '', '']);
    const spool = path.join(state, 'spool');
    const spooled = (existsSync(spool) ? readdirSync(spool) : [])
      .filter((f) => f.endsWith('.hook'))
      .sort()
      .map((f) => decode(readFileSync(path.join(spool, f))).env.session_id);
    const delivered = fake.bodies.map((b) => (JSON.parse(b.toString()) as { session_id: string }).session_id);
    expect([...delivered, ...spooled]).toEqual(calls.map((c) => c.kwargs.session_id));
  });

  it('a logging.config.dictConfig() in a running Hermes (uvicorn, in the gateway) closes every handler: the queue is flushed, later hooks are still queued, and the exit still flushes', async () => {
    // ~100 ms per reply: a hook delivered inline on the agent's thread would take that long
    fake = await fakeDaemon((_b, res) => setTimeout(() => res.end('{}'), 100));
    const start = (i: number) => ({ hook: 'on_session_start', kwargs: { session_id: `s${i}`, ...TS } });
    const calls = [start(0), start(1), { ...start(2), exec: 'logging.config.dictConfig({"version": 1})' }, start(3), start(4)];
    const r = await runHarness({ pluginDir: pluginCopy(['--state-dir', tempDir(), '--socket', fake.socket]), calls, hardExit: true });
    expect([r.code, r.stdout, r.stderr]).toEqual([0, '', '']);
    expect(r.out.results.slice(2).every((x) => x.ms < 50)).toBe(true);
    expect(fake.bodies.map((b) => (JSON.parse(b.toString()) as { session_id: string }).session_id)).toEqual(['s0', 's1', 's2', 's3', 's4']);
  });
});
