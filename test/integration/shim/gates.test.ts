/**
 * The shim's two opt-in gates (src/shim/hook.cts): `control` (AEP_HERMES_CONTROL or `--control`) holds a `pre_tool_call` for the
 * daemon's answer, announcing how long it will wait in `x-hermes-aep-hold-ms`; `instruct` (AEP_INSTRUCT or `--instruct`) lets a
 * `pre_llm_call` context reply through. A reply reaches Hermes only through the gate that permits it; with both gates off the request
 * and the answer are exactly the observation path's. Run as Hermes runs it: a separate process per hook, against a peer on loopback.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createRequire } from 'node:module';
import { createServer, type Server, type Socket } from 'node:net';
import path from 'node:path';
import { existsSync, readdirSync } from 'node:fs';
import { SHIM } from '../../support/paths.js';
import { runShim, tempDir, waitFor } from '../../support/processes.js';

type Shim = typeof import('../../../src/shim/hook.cjs');
const { hookName, permitted, shimGates } = createRequire(import.meta.url)(SHIM) as Shim;

/** Hermes's own bytes: json.dumps with its default separators, hook_event_name first. */
const envelope = (hook: string) =>
  `{"hook_event_name": "${hook}", "tool_name": "terminal", "tool_input": {"command": "ls"}, "session_id": "s1", "cwd": "/w", "extra": {"task_id": "t"}}`;
const BLOCK = '{"action":"block","message":"the operator said no"}';
const CONTEXT = '{"context":"look at the tests first"}';

/** What the peer got for one request: the head lines and the body. */
type Got = { lines: string[]; body: string };
/** every request names the key the shim would spool it under (x-hermes-aep-spool-key): kept apart from the head compared below */
const SPOOL_KEY_LINE = /^x-hermes-aep-spool-key: /i;
const spoolKeys: (string | undefined)[] = [];
let answer: (sock: Socket) => void = (s) => reply(s, '{}');
const got: Got[] = [];
const open = new Set<Socket>();
let peer: Server;
let url = '';

function reply(s: Socket, body: string): void {
  s.end(`HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
}

beforeAll(async () => {
  peer = createServer((sock) => {
    open.add(sock);
    sock.on('close', () => open.delete(sock));
    sock.on('error', () => undefined);
    let buf = Buffer.alloc(0);
    sock.on('data', (c: Buffer) => {
      buf = Buffer.concat([buf, c]);
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const all = buf.toString('latin1', 0, end).split('\r\n');
      const lines = all.filter((l) => !SPOOL_KEY_LINE.test(l));
      const spoolKey = all.find((l) => SPOOL_KEY_LINE.test(l))?.replace(SPOOL_KEY_LINE, '');
      const length = Number(/^content-length: (\d+)$/im.exec(lines.join('\n'))?.[1] ?? 0);
      if (buf.length < end + 4 + length) return;
      got.push({ lines, body: buf.toString('utf8', end + 4) });
      spoolKeys.push(spoolKey);
      buf = Buffer.alloc(0);
      answer(sock);
    });
  });
  await new Promise<void>((r) => peer.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(peer.address() as { port: number }).port}/hook`;
});
afterEach(() => {
  for (const s of open) s.destroy();
  got.length = 0;
  answer = (s) => reply(s, '{}');
});
afterAll(async () => {
  await new Promise((r) => peer.close(r));
});

/** No gate from the caller's shell: every test says which it turns on. */
const OFF = { AEP_HERMES_CONTROL: '', AEP_INSTRUCT: '', AEP_ATTENTION_TIMEOUT_MS: '', AEP_SHIM_TIMEOUT_MS: '' };
/** a test's own timeout, stated where a test relies on it (a deadline past it cannot be waited for and pass) */
const TEST_MS = 30_000;
const shim = (hook: string, env: Record<string, string> = {}, args: string[] = [], body = envelope(hook)) =>
  runShim(body, { ...OFF, AEP_HOOK_URL: url, AEP_STATE_DIR: tempDir(), ...env }, 'shim', args);
const holdHeader = (g: Got | undefined) => g?.lines.filter((l) => /^x-hermes-aep-hold-ms:/i.test(l));

describe('the request: the hold header, only for a pre_tool_call under the control gate', () => {
  it('gate off: the exact head the observation path has always sent, the body as Hermes wrote it, and {} whatever the daemon says', async () => {
    for (const [hook, said] of [
      ['pre_tool_call', BLOCK],
      ['pre_llm_call', CONTEXT],
    ]) {
      answer = (s) => reply(s, said!);
      const r = await shim(hook!);
      expect([r.code, r.stdout, r.stderr]).toEqual([0, '{}', '']);
      expect(got[0]!.lines).toEqual([
        'POST /hook HTTP/1.1',
        `Host: ${new URL(url).host}`,
        'Content-Type: application/json',
        `Content-Length: ${Buffer.byteLength(envelope(hook!))}`,
        'Connection: close',
      ]);
      expect(got[0]!.body).toBe(envelope(hook!));
      expect(spoolKeys.at(-1)).toMatch(/^\d{15}-\d{20}-\d{1,10}-[a-z0-9]{0,16}$/);
      got.length = 0;
    }
  });

  it('control on: pre_tool_call carries x-hermes-aep-hold-ms = AEP_ATTENTION_TIMEOUT_MS + 3000 (default 55000), before Connection', async () => {
    await shim('pre_tool_call', { AEP_HERMES_CONTROL: '1' });
    expect(got[0]!.lines.slice(-2)).toEqual(['x-hermes-aep-hold-ms: 58000', 'Connection: close']);
    for (const [window, want] of [
      ['1000', '4000'],
      ['120000', '123000'],
      ['abc', '58000'],
      ['0', '58000'],
      ['-5', '58000'],
      ['1.5', '58000'],
    ]) {
      got.length = 0;
      await shim('pre_tool_call', { AEP_HERMES_CONTROL: 'TRUE', AEP_ATTENTION_TIMEOUT_MS: window! });
      expect(holdHeader(got[0]), window).toEqual([`x-hermes-aep-hold-ms: ${want}`]);
    }
  });

  it('the arguments install records act as the environment does, and win over it', async () => {
    await shim('pre_tool_call', {}, ['--control']);
    expect(holdHeader(got[0])).toEqual(['x-hermes-aep-hold-ms: 58000']);
    got.length = 0;
    await shim('pre_tool_call', { AEP_ATTENTION_TIMEOUT_MS: '9000' }, ['--control', '--attention-timeout-ms', '2000']);
    expect(holdHeader(got[0])).toEqual(['x-hermes-aep-hold-ms: 5000']);
    got.length = 0;
    await shim('pre_tool_call', { AEP_HERMES_CONTROL: 'on' }, ['--attention-timeout-ms=7000']);
    expect(holdHeader(got[0])).toEqual(['x-hermes-aep-hold-ms: 10000']);
  });

  it('every other hook, and pre_tool_call without the control gate, sends the observation request unchanged', async () => {
    const cases: [string, Record<string, string>, string[]][] = [
      ['pre_llm_call', { AEP_HERMES_CONTROL: '1' }, []],
      ['post_tool_call', { AEP_HERMES_CONTROL: '1' }, ['--instruct']],
      ['on_session_start', {}, ['--control', '--instruct']],
      ['pre_tool_call', { AEP_INSTRUCT: 'yes' }, []],
      ['pre_tool_call', { AEP_HERMES_CONTROL: 'no' }, []],
    ];
    for (const [hook, env, args] of cases) {
      await shim(hook, {}, []);
      const plain = got.pop()!;
      await shim(hook, env, args);
      expect(got.pop(), `${hook} ${JSON.stringify(env)} ${args.join(' ')}`).toEqual(plain);
      expect(holdHeader(plain)).toEqual([]);
    }
  });

  it('a pre_llm_call under instruct declares x-hermes-aep-steer: 1 (its context reply reaches Hermes); nothing else changes', async () => {
    await shim('pre_llm_call', {}, []);
    const plain = got.pop()!;
    for (const [env, args] of [
      [{ AEP_INSTRUCT: '1' }, []],
      [{}, ['--instruct']],
    ] as const) {
      await shim('pre_llm_call', env, [...args]);
      const steered = got.pop()!;
      expect(steered.lines.filter((l) => /^x-hermes-aep-steer:/i.test(l))).toEqual(['x-hermes-aep-steer: 1']);
      expect({ ...steered, lines: steered.lines.filter((l) => !/^x-hermes-aep-steer:/i.test(l)) }).toEqual(plain);
    }
    expect(plain.lines.some((l) => /^x-hermes-aep-steer:/i.test(l))).toBe(false);
  });

  it('the name is read from the head of the envelope only: a body where hook_event_name is not first is never held', async () => {
    const body = '{"tool_name": "terminal", "hook_event_name": "pre_tool_call"}';
    answer = (s) => reply(s, BLOCK);
    const r = await shim('pre_tool_call', { AEP_HERMES_CONTROL: '1' }, [], body);
    expect([r.code, r.stdout]).toEqual([0, '{}']);
    expect(holdHeader(got[0])).toEqual([]);
  });
});

describe('the deadline: AEP_ATTENTION_TIMEOUT_MS + 3000 for a held pre_tool_call, AEP_SHIM_TIMEOUT_MS for everything else', () => {
  it('a daemon that answers after 1.5 s: the held pre_tool_call gets its block; every other case hung up at 300 ms and printed {}', async () => {
    // per request: did the shim wait for the answer, or close its socket first?
    const fate: string[] = [];
    answer = (s) => {
      const i = got.length - 1;
      const t = setTimeout(() => {
        fate[i] = 'waited';
        reply(s, BLOCK);
      }, 1_500);
      s.once('close', () => {
        fate[i] ??= 'hung up';
        clearTimeout(t);
      });
    };
    const env = { AEP_SHIM_TIMEOUT_MS: '300', AEP_ATTENTION_TIMEOUT_MS: '4000' };
    const held = await shim('pre_tool_call', { ...env, AEP_HERMES_CONTROL: '1' });
    expect([held.code, held.stdout]).toEqual([0, BLOCK]);
    const others = [
      ['pre_tool_call', {}],
      ['pre_tool_call', { AEP_INSTRUCT: '1' }],
      ['pre_llm_call', { AEP_HERMES_CONTROL: '1', AEP_INSTRUCT: '1' }],
      ['post_tool_call', { AEP_HERMES_CONTROL: '1' }],
    ] as const;
    for (const [hook, gates] of others) {
      const r = await shim(hook, { ...env, ...gates });
      expect([r.code, r.stdout], `${hook} ${JSON.stringify(gates)}`).toEqual([0, '{}']);
    }
    await waitFor('every peer socket closed', () => fate.filter(Boolean).length === 5 || undefined);
    expect(fate).toEqual(['waited', 'hung up', 'hung up', 'hung up', 'hung up']);
  });

  // The two tests below show the held call ending on its own (short) terms, not at a long deadline, without a clock:
  // the long deadline (AEP_SHIM_TIMEOUT_MS 60 s; the default hold, 55 s + 3 s) is beyond the test's own timeout
  // (TEST_MS), so a shim that waited for it fails the test by timing out.
  it(
    'a daemon that never answers: the held pre_tool_call fails open with {} once its own deadline passes, and is not spooled',
    async () => {
      answer = () => undefined;
      const state = tempDir();
      const r = await shim('pre_tool_call', {
        AEP_HERMES_CONTROL: '1',
        AEP_ATTENTION_TIMEOUT_MS: '200',
        AEP_SHIM_TIMEOUT_MS: String(2 * TEST_MS),
        AEP_STATE_DIR: state,
      });
      expect([r.code, r.stdout, r.stderr]).toEqual([0, '{}', '']);
      expect(holdHeader(got[0])).toEqual(['x-hermes-aep-hold-ms: 3200']);
      expect(r.ms).toBeGreaterThanOrEqual(3_200);
      // sent whole, then no answer: the daemon may have it, so it is not spooled (the spool rules are unchanged)
      expect(existsSync(path.join(state, 'spool'))).toBe(false);
    },
    TEST_MS,
  );

  it(
    'no daemon at all: a held pre_tool_call answers {} at once and is spooled, as any hook the daemon did not take',
    async () => {
      const state = tempDir();
      // OFF leaves the hold window at its default: the held call would wait 58 s, past TEST_MS
      const r = await runShim(envelope('pre_tool_call'), { ...OFF, AEP_HOOK_URL: 'http://127.0.0.1:9/hook', AEP_HERMES_CONTROL: '1', AEP_STATE_DIR: state });
      expect([r.code, r.stdout, r.stderr]).toEqual([0, '{}', '']);
      expect(readdirSync(path.join(state, 'spool')).filter((f) => f.endsWith('.hook'))).toHaveLength(1);
    },
    TEST_MS,
  );
});

describe('the answer: a reply only through the gate that permits it', () => {
  it.each([
    // [gates, hook, the daemon's reply, what Hermes gets]
    ['control', 'pre_tool_call', BLOCK, BLOCK],
    ['control', 'pre_tool_call', '{"decision":"block","reason":"r"}', '{"action":"block","message":"r"}'],
    ['control', 'pre_tool_call', '{"action":"block"}', '{"action":"block","message":"Blocked by shell hook."}'],
    ['control', 'pre_tool_call', '{"action":"block","message":"no","context":"x"}', '{"action":"block","message":"no"}'],
    ['control', 'pre_tool_call', '{}', '{}'],
    ['control', 'pre_tool_call', CONTEXT, '{}'],
    ['control', 'pre_tool_call', '{"action":"allow"}', '{}'],
    ['control', 'pre_llm_call', CONTEXT, '{}'],
    ['instruct', 'pre_llm_call', CONTEXT, CONTEXT],
    ['instruct', 'pre_llm_call', '{"context":"ü ✓ \\n two lines"}', '{"context":"ü ✓ \\n two lines"}'],
    ['instruct', 'pre_llm_call', '{"context":"x","action":"block"}', '{"context":"x"}'],
    ['instruct', 'pre_llm_call', '{"context":"  "}', '{}'],
    ['instruct', 'pre_llm_call', '{"context":1}', '{}'],
    ['instruct', 'pre_llm_call', '{}', '{}'],
    ['instruct', 'pre_tool_call', BLOCK, '{}'],
    ['both', 'post_tool_call', BLOCK, '{}'],
    ['both', 'on_session_start', CONTEXT, '{}'],
    ['both', 'pre_llm_call', BLOCK, '{}'],
    ['none', 'pre_tool_call', BLOCK, '{}'],
    ['none', 'pre_llm_call', CONTEXT, '{}'],
  ] as const)('%s, %s, the daemon says %s → Hermes gets %s', (gates, hook, said, want) => {
    const g = { control: gates === 'control' || gates === 'both', instruct: gates === 'instruct' || gates === 'both', holdMs: 58_000 };
    expect(permitted(hook, g, said)).toBe(want);
  });

  it('through the whole process, with the gates given by argv or by the environment', async () => {
    for (const [hook, said, env, args] of [
      ['pre_tool_call', BLOCK, { AEP_HERMES_CONTROL: 'yes' }, []],
      ['pre_tool_call', BLOCK, {}, ['--control']],
      ['pre_llm_call', CONTEXT, { AEP_INSTRUCT: 'On' }, []],
      ['pre_llm_call', CONTEXT, {}, ['--instruct']],
    ] as const) {
      answer = (s) => reply(s, said);
      const r = await shim(hook, env, [...args]);
      expect([r.code, r.stdout, r.stderr], `${hook} ${JSON.stringify(env)} ${args.join(' ')}`).toEqual([0, said, '']);
    }
    // a reply the gate does not permit, from a daemon that says it anyway: {}
    for (const [hook, said, env] of [
      ['pre_tool_call', BLOCK, { AEP_INSTRUCT: '1' }],
      ['pre_tool_call', CONTEXT, { AEP_HERMES_CONTROL: '1', AEP_INSTRUCT: '1' }],
      ['pre_llm_call', CONTEXT, { AEP_HERMES_CONTROL: '1' }],
      ['post_tool_call', BLOCK, { AEP_HERMES_CONTROL: '1', AEP_INSTRUCT: '1' }],
    ] as const) {
      answer = (s) => reply(s, said);
      const r = await shim(hook, env);
      expect([r.code, r.stdout, r.stderr], `${hook} ${JSON.stringify(env)}`).toEqual([0, '{}', '']);
    }
    // garbage from the daemon, gates on: {}
    answer = (s) => reply(s, 'not json');
    expect((await shim('pre_tool_call', { AEP_HERMES_CONTROL: '1' })).stdout).toBe('{}');
    expect((await shim('pre_llm_call', { AEP_INSTRUCT: '1' })).stdout).toBe('{}');
  });
});

describe('the parts', () => {
  it('hookName reads the first key of the envelope, in either spacing, and nothing else', () => {
    expect(hookName(Buffer.from(envelope('pre_tool_call')))).toBe('pre_tool_call');
    expect(hookName(Buffer.from('{"hook_event_name":"pre_llm_call","x":1}'))).toBe('pre_llm_call');
    expect(hookName(Buffer.from(' {\n "hook_event_name" : "on_session_end"}'))).toBe('on_session_end');
    for (const b of ['{"x": 1, "hook_event_name": "pre_tool_call"}', '["hook_event_name", "pre_tool_call"]', '', '{"hook_event_name": 1}'])
      expect(hookName(Buffer.from(b)), b).toBeUndefined();
  });

  it('shimGates: argv or a truthy environment value (1, true, yes, on; any case) turns a gate on; the hold is the window + 3000', () => {
    expect(shimGates([], {})).toEqual({ control: false, instruct: false, holdMs: 58_000 });
    for (const v of ['1', 'true', 'YES', 'On'])
      expect(shimGates([], { AEP_HERMES_CONTROL: v, AEP_INSTRUCT: v })).toMatchObject({ control: true, instruct: true });
    for (const v of ['0', 'false', 'off', '', ' 1', 'enabled'])
      expect(shimGates([], { AEP_HERMES_CONTROL: v, AEP_INSTRUCT: v })).toMatchObject({ control: false, instruct: false });
    expect(shimGates(['--socket', '/s', '--control', '--attention-timeout-ms', '100'], { AEP_ATTENTION_TIMEOUT_MS: '5' })).toEqual({
      control: true,
      instruct: false,
      holdMs: 3_100,
    });
    // an option's value is never read as a flag
    expect(shimGates(['--state-dir', '--control'], {}).control).toBe(false);
  });
});
