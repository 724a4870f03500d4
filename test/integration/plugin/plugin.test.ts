import { afterEach, describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { ServerResponse } from 'node:http';
import { ROOT } from '../../support/paths.js';
import { tempDir, waitFor } from '../../support/processes.js';
import { MODEL_CALL_HOOK, REGISTERED_HOOKS } from '../../../src/hermes/envelope.js';
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
/** post_api_request as Hermes passes it: `assistant_message` is the provider SDK's raw object (here one whose str() raises) */
const MODEL_CALL = {
  task_id: 't',
  turn_id: 's1:t:0a1b2c3d',
  api_request_id: 'r1',
  session_id: 's1',
  model: 'gpt-x',
  provider: 'custom',
  api_call_count: 1,
  finish_reason: 'stop',
  usage: { input_tokens: 12, output_tokens: 3 },
  response: { assistant_message: { role: 'assistant', content: 'hi there' } },
  assistant_message: { $py: 'Boom()' },
  ...TS,
};

/**
 * A test's own timeout, stated where a test relies on it: a deadline set past it cannot be waited for and pass, so
 * "at once, not at the deadline" needs no clock (the harness's own kill comes at 60 s, later still).
 */
const TEST_MS = 30_000;
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
        let bytes = line.replace(`"cwd": ${JSON.stringify(env.cwd)}`, `"cwd": ${JSON.stringify(cwd)}`);
        // the plugin leaves out post_api_request's raw assistant object (the shell transport's str() of it); the sanitized
        // copy under `response` stays, byte for byte
        if (env.hook_event_name === 'post_api_request') bytes = bytes.replace(/, "assistant_message": "(?:[^"\\]|\\.)*"/, '');
        want.push(bytes);
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

describe('plugin transport: post_api_request (one per model call) and install --no-model-calls', () => {
  it('forwarded like any observation hook, without the raw assistant_message (never str()-ed): never waits, even with both gates on', async () => {
    // the stand-in never answers: a callback that waited would take its whole deadline
    fake = await fakeDaemon(() => undefined);
    const cwd = tempDir('hermes-aep-cwd-');
    const r = await runHarness({
      pluginDir: pluginCopy(['--socket', fake.socket, '--control', '--instruct']),
      env: { AEP_SHIM_TIMEOUT_MS: '2000' },
      cwd,
      calls: [{ hook: MODEL_CALL_HOOK, kwargs: MODEL_CALL }],
    });
    expect([r.code, r.stdout, r.stderr]).toEqual([0, '', '']);
    expect(r.out.results[0]).toMatchObject({ ret: null, raised: null });
    expect(r.out.dropped).toBe(0);
    await waitFor('the hook sent', () => fake!.bodies.length >= 1 || undefined);
    // Hermes's _serialize_payload bytes, every other kwarg in its order, assistant_message left out
    const { session_id: _sid, assistant_message: _raw, ...extra } = MODEL_CALL;
    const py = (v: unknown): string =>
      Array.isArray(v)
        ? `[${v.map(py).join(', ')}]`
        : v !== null && typeof v === 'object'
          ? `{${Object.entries(v)
              .map(([k, x]) => `${JSON.stringify(k)}: ${py(x)}`)
              .join(', ')}}`
          : JSON.stringify(v);
    expect(fake.bodies.map((b) => b.toString('utf8'))).toEqual([
      `{"hook_event_name": "post_api_request", "tool_name": null, "tool_input": null, "session_id": "s1", "cwd": ${JSON.stringify(cwd)}, "extra": ${py(extra)}}`,
    ]);
    expect(fake.headers.map((h) => [h['x-hermes-aep-hold-ms'], h['x-hermes-aep-steer']])).toEqual([[undefined, undefined]]);
  });

  it('only post_api_request loses assistant_message: another hook keeps a kwarg of that name', async () => {
    fake = await fakeDaemon();
    await runHarness({
      pluginDir: pluginCopy(['--socket', fake.socket]),
      calls: [{ hook: 'on_session_end', kwargs: { session_id: 's1', assistant_message: 'kept' } }],
    });
    expect(JSON.parse(fake.bodies[0]!.toString()).extra).toEqual({ assistant_message: 'kept' });
  });

  it('--no-model-calls in the args (install --no-model-calls): post_api_request is not subscribed, the other twelve are, the target still reads', async () => {
    fake = await fakeDaemon();
    const without = await runHarness({
      pluginDir: pluginCopy(['--socket', fake.socket, '--no-model-calls', '--instruct']),
      env: { AEP_INSTRUCT: '' },
      calls: [{ hook: 'pre_llm_call', kwargs: PRE_LLM }],
    });
    expect(without.out.hooks).toEqual(REGISTERED_HOOKS.filter((h) => h !== MODEL_CALL_HOOK).sort());
    expect(without.out.hooks).toHaveLength(12);
    // the other arguments keep their meaning: the socket, and --instruct (the pre_llm_call announced its wait)
    expect(fake.headers.map((h) => h['x-hermes-aep-steer'])).toEqual(['1']);
    const withIt = await runHarness({ pluginDir: pluginCopy(['--socket', fake.socket]), calls: [] });
    expect(withIt.out.hooks).toEqual([...REGISTERED_HOOKS].sort());
    expect(withIt.out.hooks).toContain(MODEL_CALL_HOOK);
  });
});

describe('plugin transport: the gates (--control / AEP_HERMES_CONTROL, --instruct / AEP_INSTRUCT)', () => {
  const OFF = { AEP_HERMES_CONTROL: '', AEP_INSTRUCT: '', AEP_ATTENTION_TIMEOUT_MS: '' };
  const hold = (i: number) => fake!.headers[i]?.['x-hermes-aep-hold-ms'];
  const BLOCK = '{"action":"block","message":"the operator said no"}';

  it('gates off, or the other gate only: neither gated hook waits, none sends the hold header, all return None', async () => {
    // the stand-in never answers: a callback that waited would take its whole deadline (at least the 200 ms)
    for (const env of [OFF, { ...OFF, AEP_HERMES_CONTROL: '1' }, { ...OFF, AEP_INSTRUCT: '1' }].map((e) => ({ ...e, AEP_SHIM_TIMEOUT_MS: '200' }))) {
      fake = await fakeDaemon(() => undefined);
      const hook = env.AEP_HERMES_CONTROL ? 'pre_llm_call' : env.AEP_INSTRUCT ? 'pre_tool_call' : 'pre_tool_call';
      const calls = [
        { hook, kwargs: hook === 'pre_tool_call' ? PRE_TOOL : PRE_LLM },
        { hook: 'post_tool_call', kwargs: PRE_TOOL },
      ];
      if (!env.AEP_HERMES_CONTROL && !env.AEP_INSTRUCT) calls.push({ hook: 'pre_llm_call', kwargs: PRE_LLM });
      const r = await runHarness({ pluginDir: pluginCopy(['--socket', fake.socket]), env, calls });
      for (const x of r.out.results) expect(x, JSON.stringify(env)).toMatchObject({ ret: null, raised: null });
      await waitFor('the hooks sent', () => fake!.headers.length >= 1 || undefined);
      expect(fake.headers.map((h) => h['x-hermes-aep-hold-ms'])).toEqual(fake.headers.map(() => undefined));
      expect(fake.headers.map((h) => h['x-hermes-aep-steer'])).toEqual(fake.headers.map(() => undefined));
      await fake.close();
      fake = undefined;
    }
  });

  it.each([
    ['pre_tool_call', BLOCK, { action: 'block', message: 'the operator said no' }],
    ['pre_tool_call', '{"decision":"block","reason":"because"}', { action: 'block', message: 'because' }],
    ['pre_tool_call', '{"action":"block"}', { action: 'block', message: 'Blocked by shell hook.' }],
    ['pre_tool_call', '{}', null],
    ['pre_tool_call', '{"context":"x"}', null],
    ['pre_tool_call', '[1]', null],
    ['pre_tool_call', 'not json', null],
    ['pre_llm_call', '{"context":"remember this"}', { context: 'remember this' }],
    ['pre_llm_call', '{"context":"  "}', null],
    ['pre_llm_call', BLOCK, null],
    ['pre_llm_call', '{}', null],
  ] as const)('its gate on: %s answered %s reaches Hermes as %j', async (hook, body, want) => {
    fake = await fakeDaemon((_b, res) => res.end(body));
    const r = await runHarness({
      pluginDir: pluginCopy(['--socket', fake.socket]),
      env: hook === 'pre_tool_call' ? { ...OFF, AEP_HERMES_CONTROL: 'on' } : { ...OFF, AEP_INSTRUCT: 'on' },
      calls: [{ hook, kwargs: hook === 'pre_tool_call' ? PRE_TOOL : PRE_LLM }],
    });
    expect(r.out.results[0]!.ret).toEqual(want);
  });

  it('the args install writes (--control, --instruct, --attention-timeout-ms) act as the environment does, and win over it', async () => {
    fake = await fakeDaemon((b, res) => res.end(b.toString().includes('"pre_tool_call"') ? BLOCK : '{"context":"c"}'));
    const r = await runHarness({
      pluginDir: pluginCopy(['--socket', fake.socket, '--control', '--instruct', '--attention-timeout-ms', '2000']),
      env: { ...OFF, AEP_ATTENTION_TIMEOUT_MS: '90000' },
      calls: [
        { hook: 'pre_tool_call', kwargs: PRE_TOOL },
        { hook: 'pre_llm_call', kwargs: PRE_LLM },
      ],
    });
    expect(r.out.results.map((x) => x.ret)).toEqual([{ action: 'block', message: 'the operator said no' }, { context: 'c' }]);
    // what it will still wait when it sends: 5000 ms (2000 + 3000) less the moment it took to get there
    expect(Number(hold(0))).toBeGreaterThan(4_000);
    expect(Number(hold(0))).toBeLessThanOrEqual(5_000);
    expect(hold(1)).toBeUndefined();
    // the pre_llm_call under instruct says its context reply reaches Hermes (the daemon delivers steering only then)
    expect(fake.headers.map((h) => h['x-hermes-aep-steer'])).toEqual([undefined, '1']);
  });

  it('control on: pre_tool_call announces AEP_ATTENTION_TIMEOUT_MS + 3000 (default 55000); no other hook carries the header', async () => {
    for (const [window, want] of [
      ['', 58_000],
      ['1000', 4_000],
      ['bad', 58_000],
    ] as const) {
      fake = await fakeDaemon((_b, res) => res.end('{}'));
      await runHarness({
        pluginDir: pluginCopy(['--socket', fake.socket]),
        env: { ...OFF, AEP_HERMES_CONTROL: 'yes', AEP_INSTRUCT: '1', AEP_ATTENTION_TIMEOUT_MS: window },
        calls: [
          { hook: 'on_session_start', kwargs: { session_id: 's1', ...TS } },
          { hook: 'pre_llm_call', kwargs: PRE_LLM },
          { hook: 'pre_tool_call', kwargs: PRE_TOOL },
          { hook: 'post_tool_call', kwargs: PRE_TOOL },
        ],
      });
      expect(fake.headers.map((h) => (h['x-hermes-aep-hold-ms'] === undefined ? '-' : 'held'))).toEqual(['-', '-', 'held', '-']);
      expect(Number(hold(2)), window).toBeGreaterThan(want - 1_000);
      expect(Number(hold(2)), window).toBeLessThanOrEqual(want);
      await fake.close();
      fake = undefined;
    }
  });

  it('the deadline: a held pre_tool_call waits past AEP_SHIM_TIMEOUT_MS for its answer; a pre_llm_call under instruct does not', async () => {
    // the stand-in answers everything 1.5 s late
    fake = await fakeDaemon((b, res) => setTimeout(() => res.end(b.toString().includes('"pre_tool_call"') ? BLOCK : '{"context":"late"}'), 1_500));
    const r = await runHarness({
      pluginDir: pluginCopy(['--socket', fake.socket]),
      env: { ...OFF, AEP_HERMES_CONTROL: '1', AEP_INSTRUCT: '1', AEP_SHIM_TIMEOUT_MS: '300', AEP_ATTENTION_TIMEOUT_MS: '4000' },
      calls: [
        { hook: 'pre_llm_call', kwargs: PRE_LLM },
        { hook: 'pre_tool_call', kwargs: PRE_TOOL },
      ],
    });
    const [llm, tool] = r.out.results;
    expect(llm).toMatchObject({ ret: null, raised: null });
    expect(tool).toMatchObject({ ret: { action: 'block', message: 'the operator said no' }, raised: null });
  });

  it(
    'a daemon that never answers a held pre_tool_call: it fails open (None) at its own deadline, and is not spooled',
    async () => {
      fake = await fakeDaemon(() => undefined);
      const state = tempDir('hermes-aep-state-');
      // its own deadline is 3.2 s (200 + 3000); AEP_SHIM_TIMEOUT_MS, twice TEST_MS, cannot be waited for and pass
      const r = await runHarness({
        pluginDir: pluginCopy(['--state-dir', state, '--socket', fake.socket]),
        env: { ...OFF, AEP_HERMES_CONTROL: '1', AEP_ATTENTION_TIMEOUT_MS: '200', AEP_SHIM_TIMEOUT_MS: String(2 * TEST_MS) },
        calls: [{ hook: 'pre_tool_call', kwargs: PRE_TOOL }],
      });
      expect(r.out.results[0]).toMatchObject({ ret: null, raised: null });
      expect(r.out.results[0]!.ms).toBeGreaterThanOrEqual(3_100);
      expect(existsSync(path.join(state, 'spool'))).toBe(false);
    },
    TEST_MS,
  );

  it(
    'a held pre_tool_call the daemon refuses 503, or one with no daemon at all: None, and spooled as the shim would',
    async () => {
      // at once, not at the hold deadline: OFF leaves the window at its default, so each would wait 58 s, past TEST_MS;
      // and spooled means refused or never sent (a held call that timed out after sending is not spooled)
      fake = await fakeDaemon((_b, res) => res.writeHead(503).end());
      const state = tempDir('hermes-aep-state-');
      const none = tempDir('hermes-aep-state-');
      const env = { ...OFF, AEP_HERMES_CONTROL: '1' };
      const calls = [{ hook: 'pre_tool_call', kwargs: PRE_TOOL }];
      const refused = await runHarness({ pluginDir: pluginCopy(['--state-dir', state, '--socket', fake.socket]), env, calls });
      const down = await runHarness({ pluginDir: pluginCopy(['--state-dir', none]), env, calls });
      for (const [r, dir] of [
        [refused, state],
        [down, none],
      ] as const) {
        expect(r.out.results[0]).toMatchObject({ ret: null, raised: null });
        const files = readdirSync(path.join(dir, 'spool')).filter((f) => f.endsWith('.hook'));
        expect(files.map((f) => decode(readFileSync(path.join(dir, 'spool', f))).env.hook_event_name)).toEqual(['pre_tool_call']);
      }
    },
    TEST_MS,
  );

  it('a hold does not stall the worker: hooks fired while a pre_tool_call is held are delivered at once, and parallel calls are each held', async () => {
    // the stand-in answers the held calls only once it holds two of them AND has received the on_session_end fired after them
    const held: ServerResponse[] = [];
    let ended = false;
    const release = () => {
      if (held.length === 2 && ended) for (const res of held) res.end(BLOCK);
    };
    fake = await fakeDaemon((b, res) => {
      const hook = (JSON.parse(b.toString()) as { hook_event_name: string }).hook_event_name;
      if (hook === 'pre_tool_call') held.push(res);
      else {
        if (hook === 'on_session_end') ended = true;
        res.end('{}');
      }
      release();
    });
    const r = await runHarness({
      pluginDir: pluginCopy(['--socket', fake.socket]),
      env: { ...OFF, AEP_HERMES_CONTROL: '1', AEP_ATTENTION_TIMEOUT_MS: '20000' },
      calls: [
        { hook: 'pre_tool_call', kwargs: PRE_TOOL, background: true },
        { hook: 'pre_tool_call', kwargs: { ...PRE_TOOL, tool_call_id: 'c2' }, background: true },
        { hook: 'on_session_end', kwargs: { session_id: 's2', ...TS } },
      ],
    });
    const block = { action: 'block', message: 'the operator said no' };
    // neither waited behind the other, without a clock: the stand-in answers only while it holds BOTH, so a second call
    // queued behind the first would leave both unanswered until their 23 s deadline, and each would fail open (None)
    expect(r.out.results.map((x) => x.ret)).toEqual([block, block, null]);
  });

  it('a held pre_tool_call still queued when its thread gives up goes out later as an ordinary hook, never held', async () => {
    fake = await fakeDaemon((_b, res) => res.end(BLOCK));
    const r = await runHarness({
      pluginDir: pluginCopy(['--socket', fake.socket]),
      env: { ...OFF, AEP_HERMES_CONTROL: '1', AEP_ATTENTION_TIMEOUT_MS: '10' },
      holdLock: true, // the worker stalls on its first delivery until every call has returned
      calls: [
        { hook: 'on_session_start', kwargs: { session_id: 's1', ...TS } },
        { hook: 'pre_tool_call', kwargs: PRE_TOOL },
      ],
    });
    expect(r.out.results[1]).toMatchObject({ ret: null, raised: null });
    expect(r.out.results[1]!.ms).toBeGreaterThanOrEqual(3_000);
    expect(fake.bodies.map((b) => (JSON.parse(b.toString()) as { hook_event_name: string }).hook_event_name)).toEqual(['on_session_start', 'pre_tool_call']);
    expect(fake.headers.map((h) => h['x-hermes-aep-hold-ms'])).toEqual([undefined, undefined]);
  });

  it("under a Hermes that bounds plugin callbacks (later releases' plugins.hook_callback_timeout), the hold ends 2 s before that bound", async () => {
    const bound = (s: string) =>
      `m = types.ModuleType("hermes_cli.plugins"); m._resolve_hook_callback_timeout = lambda: ${s}; sys.modules["hermes_cli.plugins"] = m`;
    for (const [budget, want] of [
      ['6.0', 4_000], // capped: 6 s - 2 s
      ['600.0', 58_000], // above the hold: no effect
      ['0', 58_000], // 0 disables Hermes's bound
      ['1/0', 28_000], // a bound that cannot be read: Hermes's default 30 s, less 2 s
      ['4.0', undefined], // 2 s left: too little to hold, so not held (no header, no wait)
    ] as const) {
      fake = await fakeDaemon((_b, res) => res.end('{}'));
      const r = await runHarness({
        pluginDir: pluginCopy(['--socket', fake.socket]),
        env: { ...OFF, AEP_HERMES_CONTROL: '1' },
        before: bound(budget),
        calls: [{ hook: 'pre_tool_call', kwargs: PRE_TOOL }],
      });
      expect(r.out.results[0], budget).toMatchObject({ ret: null, raised: null });
      await waitFor('the hook sent', () => fake!.headers.length >= 1 || undefined);
      if (want === undefined) expect(hold(0), budget).toBeUndefined();
      else {
        expect(Number(hold(0)), budget).toBeGreaterThan(want - 1_000);
        expect(Number(hold(0)), budget).toBeLessThanOrEqual(want);
      }
      await fake.close();
      fake = undefined;
    }
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
      env: { AEP_INSTRUCT: 'on' },
      calls: [
        { hook: 'on_session_start', kwargs: { session_id: 's1', bad: { $py: 'Boom()' } } },
        { hook: 'on_session_start', kwargs: { session_id: 'reset' }, drain: true },
        { hook: 'pre_llm_call', kwargs: PRE_LLM },
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

  it(
    'a logging.config.dictConfig() in a running Hermes (uvicorn, in the gateway) closes every handler: the queue is flushed, later hooks are still queued, and the exit still flushes',
    async () => {
      // ~100 ms per reply for the hooks before the dictConfig(); the hooks after it are answered only once the last call
      // has begun (a marker file its exec writes). Queued, they wait on the worker and every call returns; delivered
      // inline on the agent's thread, s2's call would wait for an answer that cannot come before s4, up to
      // AEP_SHIM_TIMEOUT_MS, twice TEST_MS: the test would fail by timing out
      const marker = path.join(tempDir('hermes-aep-marker-'), 'last-call');
      fake = await fakeDaemon((b, res) => {
        if (['s0', 's1'].includes((JSON.parse(b.toString()) as { session_id: string }).session_id)) setTimeout(() => res.end('{}'), 100);
        else
          void waitFor('the last call', () => existsSync(marker), 2 * TEST_MS).then(
            () => res.end('{}'),
            () => undefined,
          );
      });
      const start = (i: number) => ({ hook: 'on_session_start', kwargs: { session_id: `s${i}`, ...TS } });
      const calls = [
        start(0),
        start(1),
        { ...start(2), exec: 'logging.config.dictConfig({"version": 1})' },
        start(3),
        { ...start(4), exec: `open(${JSON.stringify(marker)}, "w").close()` },
      ];
      const r = await runHarness({
        pluginDir: pluginCopy(['--state-dir', tempDir(), '--socket', fake.socket]),
        env: { AEP_SHIM_TIMEOUT_MS: String(2 * TEST_MS) },
        calls,
        hardExit: true,
      });
      expect([r.code, r.stdout, r.stderr]).toEqual([0, '', '']);
      expect(r.out.results.map((x) => x.raised)).toEqual([null, null, null, null, null]);
      expect(fake.bodies.map((b) => (JSON.parse(b.toString()) as { session_id: string }).session_id)).toEqual(['s0', 's1', 's2', 's3', 's4']);
    },
    TEST_MS,
  );
});
