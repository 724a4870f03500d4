/**
 * The plugin transport under later Hermes's plugin semantics (hermes_cli/plugins.py at NousResearch/hermes-agent
 * 00067189dfecf833d4d009c2dd977ae85cf800e0, 0.21.3; plugins_dispatch.py at 006a5aebb4d134ba188ff60adf1a02f668312b5f):
 * `plugins.hook_callback_timeout` (default 30 s) abandons a slow callback, and a pre_tool_call callback that times out or
 * raises BLOCKS the tool; other hooks (session finalize, subagent_start, approvals) run inline with no bound at all. So: no
 * callback waits past the bound the plugin reads from Hermes (less 2 s), none raises, the unbounded ones only queue, and
 * none returns a modify or an approve. Driven as Hermes drives it (test/integration/plugin/harness.py, a fake ctx).
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { REGISTERED_HOOKS } from '../../../src/hermes/envelope.js';
import { requirePython } from '../../support/python.js';
import { fakeDaemon, pluginCopy, runHarness, type FakeDaemon } from './support.js';

const run = promisify(execFile);
const TS = { telemetry_schema_version: 'hermes.observer.v1' };
const KWARGS: Record<string, Record<string, unknown>> = {
  pre_tool_call: { tool_name: 'terminal', args: { command: 'ls' }, task_id: 't', session_id: 's1', tool_call_id: 'c1', ...TS },
  pre_llm_call: { session_id: 's1', task_id: 't', user_message: 'hi', conversation_history: [], ...TS },
};
const every = REGISTERED_HOOKS.map((hook) => ({ hook, kwargs: KWARGS[hook] ?? { session_id: 's1', ...TS } }));
const OFF = { AEP_HERMES_CONTROL: '', AEP_INSTRUCT: '', AEP_ATTENTION_TIMEOUT_MS: '', AEP_SHIM_TIMEOUT_MS: '' };
/** a stand-in for the later Hermes module the plugin reads its bound from (never imported by the plugin) */
const bounded = (resolver: string | undefined) =>
  `m = types.ModuleType("hermes_cli.plugins_dispatch")\n${resolver === undefined ? '' : `m._resolve_hook_callback_timeout = lambda: ${resolver}\n`}sys.modules["hermes_cli.plugins_dispatch"] = m`;

let fake: FakeDaemon | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

describe('the wait a callback may keep Hermes for is below hook_callback_timeout', () => {
  it('every hook, every gate and setting, every way the bound reads: no wait reaches the bound; observation hooks never wait', async () => {
    requirePython();
    const plugin = path.join(pluginCopy(), '__init__.py');
    const script = `
import importlib.util, json, sys, types
spec = importlib.util.spec_from_file_location("p", sys.argv[1]); mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
out = []
for name, resolver in [("default 30 s", "30.0"), ("unreadable", "1/0"), ("not a number", "'x'"), ("negative", "-5"), ("no resolver, dispatch present", None), ("6 s", "6.0")]:
    m = types.ModuleType("hermes_cli.plugins_dispatch")
    if resolver is not None:
        m._resolve_hook_callback_timeout = eval("lambda: " + resolver)
    sys.modules["hermes_cli.plugins_dispatch"] = m
    budget = mod.hermes_callback_budget_ms()
    for hook in json.loads(sys.argv[2]):
        for args in ([], ["--control"], ["--instruct"], ["--control", "--instruct", "--attention-timeout-ms", "600000"]):
            for shim_ms in ("", "5000", "600000"):
                env = {"AEP_SHIM_TIMEOUT_MS": shim_ms, "AEP_ATTENTION_TIMEOUT_MS": "900000"}
                out.append({"bound": name, "budget": budget, "hook": hook, "args": args, "shim_ms": shim_ms, "wait": mod.callback_wait_ms(hook, args, env, budget)})
print(json.dumps(out))
`;
    const { stdout } = await run('python3', ['-c', script, plugin, JSON.stringify(REGISTERED_HOOKS)]);
    const rows = JSON.parse(stdout) as { bound: string; budget: number | null; hook: string; args: string[]; wait: number | null }[];
    expect(rows.length).toBe(6 * REGISTERED_HOOKS.length * 4 * 3);
    // a Hermes that bounds callbacks is never read as unbounded: what cannot be read is its default, 30 s
    expect(Object.fromEntries(rows.map((r) => [r.bound, r.budget]))).toEqual({
      'default 30 s': 30_000,
      unreadable: 30_000,
      'not a number': 30_000,
      negative: 30_000,
      'no resolver, dispatch present': 30_000,
      '6 s': 6_000,
    });
    for (const r of rows) {
      if (r.wait === null) continue;
      expect(['pre_tool_call', 'pre_llm_call'], JSON.stringify(r)).toContain(r.hook);
      expect(r.wait, JSON.stringify(r)).toBeLessThanOrEqual(r.budget! - 2_000);
      expect(r.wait, JSON.stringify(r)).toBeLessThan(30_000);
    }
    expect(rows.filter((r) => !['pre_tool_call', 'pre_llm_call'].includes(r.hook)).every((r) => r.wait === null)).toBe(true);
    // the gated ones do wait when gated (the assertions above are not vacuous)
    expect(rows.filter((r) => r.wait !== null).map((r) => r.hook)).toEqual(expect.arrayContaining(['pre_tool_call', 'pre_llm_call']));
  });

  it('a daemon that hangs: both gated callbacks return None (never raise) once their own deadline passes; printed timings', async () => {
    fake = await fakeDaemon(() => undefined); // takes every request, answers none
    const r = await runHarness({
      pluginDir: pluginCopy(['--socket', fake.socket, '--control', '--instruct']),
      env: { ...OFF, AEP_SHIM_TIMEOUT_MS: '600000' },
      before: bounded('5.0'), // the bound: 5 s, so each waits 3 s
      calls: [
        { hook: 'pre_tool_call', kwargs: KWARGS.pre_tool_call! },
        { hook: 'pre_llm_call', kwargs: KWARGS.pre_llm_call! },
      ],
    });
    console.log(
      `under a 5 s bound, a hanging daemon: pre_tool_call ${Math.round(r.out.results[0]!.ms)} ms, pre_llm_call ${Math.round(r.out.results[1]!.ms)} ms`,
    );
    expect([r.code, r.stdout, r.stderr]).toEqual([0, '', '']);
    expect(r.out.results.map((x) => [x.ret, x.raised])).toEqual([
      [null, null],
      [null, null],
    ]);
    // the held one announced what was left of its 3 s wait when it was sent; the other is no hold
    const holds = fake.headers.map((h) => h['x-hermes-aep-hold-ms']);
    expect(holds[1]).toBeUndefined();
    expect(Number(holds[0])).toBeGreaterThan(2_000);
    expect(Number(holds[0])).toBeLessThanOrEqual(3_000);
  });
});

describe('hooks Hermes runs unbounded (session finalize, subagent_start, approvals) only queue', () => {
  it('with delivery impossible (the worker stalled on the delivery lock), every registered hook returns at once, gates on', async () => {
    fake = await fakeDaemon((_b, res) => res.end('{}'));
    // a callback that waited for its delivery could not return before the lock is released after the last call: the harness
    // would never finish and the test would time out. The gated pair waits by design (bounded: above), so it is left out here
    const r = await runHarness({
      pluginDir: pluginCopy(['--socket', fake.socket, '--control', '--instruct']),
      env: OFF,
      holdLock: true,
      calls: every.filter((c) => !['pre_tool_call', 'pre_llm_call'].includes(c.hook)),
    });
    expect(r.out.results.every((x) => x.ret === null && x.raised === null)).toBe(true);
    expect(r.out.results).toHaveLength(REGISTERED_HOOKS.length - 2);
    expect(fake.bodies).toHaveLength(REGISTERED_HOOKS.length - 2); // all delivered once the lock was released
  });
});

describe('every callback catches every exception', () => {
  const rigged = {
    'connect raises OSError': 'import socket\ndef boom(*a, **k):\n    raise OSError("no route")\nsocket.socket.connect = boom',
    'json.dumps raises (a raising encoder)':
      'import json as j, types\ndef boom(*a, **k):\n    raise ValueError("encoder")\nmod.json = types.SimpleNamespace(dumps=boom, loads=j.loads)',
    'json.loads raises (a reply parser failing)':
      'import json as j, types\ndef boom(*a, **k):\n    raise RecursionError("deep")\nmod.json = types.SimpleNamespace(dumps=j.dumps, loads=boom)',
    'the queue raises on put': 'def boom(*a, **k):\n    raise RuntimeError("queue")\nfwd.queue.put_nowait = boom',
    'os.environ raises on read': 'import types\nmod.os = types.SimpleNamespace(environ=None, getpid=lambda: 1)',
  } as const;
  it.each(Object.entries(rigged))('%s: every registered hook, gates on, returns None or a block/context, never raises', async (_name, exec) => {
    fake = await fakeDaemon((_b, res) => res.end('not json {'));
    const calls = every.map((c, i) => (i === 0 ? { ...c, exec } : c));
    const r = await runHarness({
      pluginDir: pluginCopy(['--socket', fake.socket, '--control', '--instruct']),
      env: { ...OFF, AEP_SHIM_TIMEOUT_MS: '500', AEP_ATTENTION_TIMEOUT_MS: '500' },
      calls,
    });
    expect(r.out.results.map((x) => x.raised)).toEqual(calls.map(() => null));
    expect(r.out.results.map((x) => x.ret)).toEqual(calls.map(() => null));
    expect([r.stdout]).toEqual(['']);
  });

  it('whatever the daemon answers, a callback returns None, {action: block, message} (pre_tool_call) or {context} (pre_llm_call): never modify or approve', async () => {
    const replies = [
      '{"action":"modify","args":{"command":"rm -rf /"}}',
      '{"decision":"modify","tool_input":{"command":"x"}}',
      '{"action":"approve"}',
      '{"decision":"approve","reason":"ok"}',
      '{"action":"block","message":"no","args":{"x":1}}',
      '{"decision":"block","reason":"policy"}',
      '{"context":"hi","action":"modify","args":{}}',
      '[1]',
      'garbage',
    ];
    let i = 0;
    fake = await fakeDaemon((_b, res) => res.end(replies[Math.floor(i++ / 2) % replies.length]));
    const calls = replies.flatMap(() => [
      { hook: 'pre_tool_call', kwargs: KWARGS.pre_tool_call! },
      { hook: 'pre_llm_call', kwargs: KWARGS.pre_llm_call! },
    ]);
    const r = await runHarness({ pluginDir: pluginCopy(['--socket', fake.socket, '--control', '--instruct']), env: OFF, calls });
    const rets = r.out.results.map((x) => x.ret as Record<string, unknown> | null);
    console.log(JSON.stringify(rets));
    for (const [k, ret] of rets.entries()) {
      if (ret === null) continue;
      const keys = Object.keys(ret).sort().join(',');
      if (calls[k]!.hook === 'pre_tool_call') expect([keys, ret.action]).toEqual(['action,message', 'block']);
      else expect(keys).toBe('context');
    }
    expect(JSON.stringify(rets)).not.toMatch(/modify|approve|decision|tool_input|"args"/);
    expect(rets.filter((x) => x !== null)).toHaveLength(3); // the two blocks and the one context came through
  });
});
