// Suite `plugin-callback`: how long the plugin transport's callbacks keep Hermes's thread, for the hooks that must not
// wait. These were the `< 100 ms` / `< 1.5 s` thresholds of test/integration/plugin/plugin.test.ts; the tests keep
// what the callbacks return, the time is measured here.
//
// Each round runs the plugin in Python as Hermes's plugin manager would (test/integration/plugin/harness.py) against a
// stand-in daemon on a Unix socket, and times each callback in Python (perf_counter around the call):
//   - gates off (neither --control nor --instruct): pre_tool_call and pre_llm_call, daemon never answering;
//   - both gates on: post_api_request (one per model call), daemon never answering;
//   - a hook fired while a pre_tool_call is held (on_session_end);
//   - under --instruct only, pre_llm_call against a daemon answering 1.5 s late, deadline AEP_SHIM_TIMEOUT_MS=300.
// The yardstick is post_tool_call, a plain observation hook, timed in the same runs. No budget: figures to read.
import type { ServerResponse } from 'node:http';
import os from 'node:os';
import type { Figure, Suite } from '../bench-types.js';
import { MODEL_CALL_HOOK } from '../../../src/hermes/envelope.js';
import { fakeDaemon, pluginCopy, runHarness, type HarnessResult } from '../../integration/plugin/support.js';
import { dist, ratioFigure, round } from '../support/stats.js';

const TS = { telemetry_schema_version: 'hermes.observer.v1' };
const PRE_TOOL = { tool_name: 'terminal', args: { command: 'ls' }, task_id: 't', session_id: 's1', tool_call_id: 'c1', turn_id: 's1:t:0a1b2c3d', ...TS };
const PRE_LLM = { session_id: 's1', task_id: 't', turn_id: 's1:t:0a1b2c3d', user_message: 'hi', conversation_history: [], is_first_turn: true, ...TS };
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
  ...TS,
};
const OFF = { AEP_HERMES_CONTROL: '', AEP_INSTRUCT: '', AEP_ATTENTION_TIMEOUT_MS: '' };
const BLOCK = '{"action":"block","message":"the operator said no"}';
const DEADLINE_MS = 300;

function msOf(r: HarnessResult, i: number): number {
  const x = r.out.results[i];
  if (!x || x.raised !== null) throw new Error(`plugin-callback: call ${i} failed (${x?.raised ?? 'no result'}; exit ${r.code})`);
  return x.ms;
}

interface Round {
  plain: number;
  gatedOff: number[];
  modelCall: number;
  duringHold: number;
  deadline: number;
}

async function oneRound(): Promise<Round> {
  const never = await fakeDaemon(() => undefined);
  try {
    const off = await runHarness({
      pluginDir: pluginCopy(['--socket', never.socket]),
      env: { ...OFF, AEP_SHIM_TIMEOUT_MS: '200' },
      calls: [
        { hook: 'pre_tool_call', kwargs: PRE_TOOL },
        { hook: 'post_tool_call', kwargs: PRE_TOOL },
        { hook: 'pre_llm_call', kwargs: PRE_LLM },
      ],
    });
    const on = await runHarness({
      pluginDir: pluginCopy(['--socket', never.socket, '--control', '--instruct']),
      env: { AEP_SHIM_TIMEOUT_MS: '2000' },
      calls: [{ hook: MODEL_CALL_HOOK, kwargs: MODEL_CALL }],
    });
    const held: ServerResponse[] = [];
    const holding = await fakeDaemon((b, res) => {
      const hook = (JSON.parse(b.toString()) as { hook_event_name: string }).hook_event_name;
      if (hook === 'pre_tool_call') held.push(res);
      else {
        res.end('{}');
        if (hook === 'on_session_end') for (const h of held) h.end(BLOCK);
      }
    });
    let hold: HarnessResult;
    try {
      hold = await runHarness({
        pluginDir: pluginCopy(['--socket', holding.socket]),
        env: { ...OFF, AEP_HERMES_CONTROL: '1', AEP_ATTENTION_TIMEOUT_MS: '20000' },
        calls: [
          { hook: 'pre_tool_call', kwargs: PRE_TOOL, background: true },
          { hook: 'on_session_end', kwargs: { session_id: 's2', ...TS } },
        ],
      });
    } finally {
      await holding.close();
    }
    const late = await fakeDaemon((b, res) => setTimeout(() => res.end(b.toString().includes('"pre_tool_call"') ? BLOCK : '{"context":"late"}'), 1_500));
    let deadline: HarnessResult;
    try {
      deadline = await runHarness({
        pluginDir: pluginCopy(['--socket', late.socket]),
        env: { ...OFF, AEP_INSTRUCT: '1', AEP_SHIM_TIMEOUT_MS: String(DEADLINE_MS) },
        calls: [{ hook: 'pre_llm_call', kwargs: PRE_LLM }],
      });
    } finally {
      await late.close();
    }
    return {
      plain: msOf(off, 1),
      gatedOff: [msOf(off, 0), msOf(off, 2)],
      modelCall: msOf(on, 0),
      duringHold: msOf(hold, 1),
      deadline: msOf(deadline, 0),
    };
  } finally {
    await never.close();
  }
}

export const pluginCallback: Suite = {
  name: 'plugin-callback',
  about:
    "the plugin transport's callback time (Python perf_counter around each call) for hooks that must not wait, against a plain post_tool_call in the same runs; stand-in daemons on a Unix socket",
  async run(ctx) {
    const rounds = ctx.short ? 5 : 20;
    const rs: Round[] = [];
    for (let i = 0; i < rounds; i++) {
      rs.push(await oneRound());
      ctx.log(`plugin-callback round ${i + 1}/${rounds}: model call ${round(rs.at(-1)!.modelCall, 1)} ms, plain ${round(rs.at(-1)!.plain, 1)} ms`);
    }
    const plain = {
      label: 'post_tool_call, gates off (the same runs)',
      measure: dist(
        rs.map((r) => r.plain),
        'ms',
      ),
    };
    const detail = { rounds, load_avg_1m: round(os.loadavg()[0]!, 2), cores: os.availableParallelism() };
    const figures: Figure[] = [
      ratioFigure({
        id: 'plugin_callback.model_call',
        label: 'plugin: post_api_request callback with both gates on, daemon never answering',
        measure: dist(
          rs.map((r) => r.modelCall),
          'ms',
        ),
        yardstick: plain,
        detail: { ...detail, was: 'plugin.test.ts: < 100 ms' },
      }),
      ratioFigure({
        id: 'plugin_callback.gated_hooks_gates_off',
        label: 'plugin: pre_tool_call / pre_llm_call callbacks with the gates off, daemon never answering',
        measure: dist(
          rs.flatMap((r) => r.gatedOff),
          'ms',
        ),
        yardstick: plain,
        detail: { ...detail, was: 'plugin.test.ts: < 100 ms' },
      }),
      ratioFigure({
        id: 'plugin_callback.during_hold',
        label: 'plugin: a hook fired while a pre_tool_call is held',
        measure: dist(
          rs.map((r) => r.duringHold),
          'ms',
        ),
        yardstick: plain,
        detail: { ...detail, was: 'plugin.test.ts: < 100 ms' },
      }),
      ratioFigure({
        id: 'plugin_callback.deadline',
        label: `plugin: pre_llm_call under --instruct, daemon answering 1.5 s late, AEP_SHIM_TIMEOUT_MS=${DEADLINE_MS}`,
        measure: dist(
          rs.map((r) => r.deadline),
          'ms',
        ),
        yardstick: { label: 'its deadline (AEP_SHIM_TIMEOUT_MS, configured)', measure: { value: DEADLINE_MS, unit: 'ms' } },
        detail: { ...detail, was: 'plugin.test.ts: < 1,500 ms' },
      }),
    ];
    return figures;
  },
};
