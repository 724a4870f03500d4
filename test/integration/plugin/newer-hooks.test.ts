import { afterEach, describe, expect, it } from 'vitest';
import { MODEL_CALL_HOOK, REGISTERED_HOOKS } from '../../../src/hermes/envelope.js';
import { fakeDaemon, pluginCopy, runHarness, type FakeDaemon } from './support.js';

/**
 * Issue 25: the plugin subscribes the later hooks only where the running Hermes fires them: the stream hooks when its
 * VALID_HOOKS lists them (0.21.3: hermes_cli/plugins.py at hermes-agent 00067189), post_auxiliary_call when it has
 * agent/auxiliary_hooks.py (7effdff8). Here the harness stands those modules in, as Hermes has them loaded by then.
 */
const STREAM = ['on_stream_start', 'on_stream_delta', 'on_stream_end'];
const NEWER_HERMES = [
  "sys.modules['hermes_cli'] = types.ModuleType('hermes_cli')",
  "p = types.ModuleType('hermes_cli.plugins'); p.VALID_HOOKS = {'pre_tool_call', 'on_stream_start', 'on_stream_delta', 'on_stream_end'}",
  "sys.modules['hermes_cli.plugins'] = p",
  'import importlib.machinery',
  "a = types.ModuleType('agent'); a.__path__ = []; sys.modules['agent'] = a",
  "h = types.ModuleType('agent.auxiliary_hooks'); h.__spec__ = importlib.machinery.ModuleSpec('agent.auxiliary_hooks', None)",
  "sys.modules['agent.auxiliary_hooks'] = h",
].join('\n');

const TURN = 's1:t:0a1b2c3d';
const delta = (kind: string, iteration: number, text: string) => ({
  hook: 'on_stream_delta',
  kwargs: { turn_id: TURN, iteration, session_id: 's1', kind, delta: text },
});

let fake: FakeDaemon | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

describe('plugin transport: the hooks of later Hermes builds', () => {
  it('an older Hermes (no such hooks): exactly the registered thirteen, as before', async () => {
    fake = await fakeDaemon();
    const r = await runHarness({ pluginDir: pluginCopy(['--socket', fake.socket]), calls: [] });
    expect(r.out.hooks).toEqual([...REGISTERED_HOOKS].sort());
  });

  it('a Hermes that fires them: the stream hooks and post_auxiliary_call too; --no-model-calls leaves every model-call hook out', async () => {
    fake = await fakeDaemon();
    const r = await runHarness({ pluginDir: pluginCopy(['--socket', fake.socket]), before: NEWER_HERMES, calls: [] });
    expect(r.out.hooks).toEqual([...REGISTERED_HOOKS, ...STREAM, 'post_auxiliary_call'].sort());
    const off = await runHarness({ pluginDir: pluginCopy(['--socket', fake.socket, '--no-model-calls']), before: NEWER_HERMES, calls: [] });
    expect(off.out.hooks).toEqual(REGISTERED_HOOKS.filter((h) => h !== MODEL_CALL_HOOK).sort());
  });

  it('on_stream_delta: only the first TEXT chunk of each model call is forwarded, without its text; the aux request stays home', async () => {
    fake = await fakeDaemon();
    await runHarness({
      pluginDir: pluginCopy(['--socket', fake.socket]),
      before: NEWER_HERMES,
      calls: [
        { hook: 'on_stream_start', kwargs: { turn_id: TURN, iteration: 1, session_id: 's1' } },
        delta('reasoning', 1, 'thinking'),
        delta('text', 1, 'Hel'),
        delta('text', 1, 'lo'),
        delta('text', 2, 'Again'),
        delta('text', 2, 'more'),
        { hook: 'on_stream_end', kwargs: { turn_id: TURN, iteration: 2, session_id: 's1', final_text: 'Againmore', finished: true } },
        {
          hook: 'post_auxiliary_call',
          kwargs: {
            session_id: 's1',
            turn_id: TURN,
            aux_task: 'title_generation',
            request_messages: [{ role: 'user', content: 'SECRET' }],
            system_prompt: 'SECRET',
            request: { body: 'SECRET' },
          },
          drain: true,
        },
      ],
    });
    const sent = fake.bodies.map((b) => JSON.parse(b.toString()) as { hook_event_name: string; extra: Record<string, unknown> });
    expect(sent.map((e) => e.hook_event_name)).toEqual(['on_stream_start', 'on_stream_delta', 'on_stream_delta', 'on_stream_end', 'post_auxiliary_call']);
    expect(sent.filter((e) => e.hook_event_name === 'on_stream_delta').map((e) => [e.extra.iteration, e.extra.kind, 'delta' in e.extra])).toEqual([
      [1, 'text', false],
      [2, 'text', false],
    ]);
    expect(sent[3]!.extra).not.toHaveProperty('final_text');
    expect(sent[4]!.extra).toEqual({ turn_id: TURN, aux_task: 'title_generation' });
    expect(fake.bodies.map((b) => b.toString()).join('')).not.toContain('SECRET');
  });
});
