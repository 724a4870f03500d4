// Suite `model-call-hook`: what registering Hermes's post_api_request hook costs per model call, on the REAL Hermes.
//
// The same `hermes -z` turns as `hermes-turn` (suites/hermes-turn.ts: the e2e fake model at a fixed 50 ms, 0/5/20
// sequential `todo` tool calls, so tools+1 model calls per turn, timed from the fake model receiving the turn's first
// chat request to Hermes printing the answer), in four homes: each transport (shell: a shim process per hook; plugin:
// the in-process forwarder) with post_api_request registered and without it. Every other hook is the same in the two
// homes of a transport, so the paired difference of their windows, divided by the turn's model calls, is the hook's
// cost per model call: one post_api_request fires after every model response, inside the window.
//
// How the homes get there. `hermes-aep install` (and `--transport plugin`) as users run it; then, where the build
// does not already give the wanted hook set, the bench adjusts its own temporary home and says so in the figure's
// detail (`adjusted`): `install --no-model-calls` when the CLI offers it, else the post_api_request entry taken out of
// config.yaml (shell); for a plugin that registers no post_api_request (this build's), the name added to the plugin
// copy's HOOKS tuple, which forwards every hook it names the same way. Each turn is checked as `hermes-turn` checks
// it, with the hook count of its home (one more hook per model call with post_api_request) and, there, one
// `x.hermes.model.call` per model call in the AEP history.
//
// The figure: the time per model call (window / model calls) with the hook, against the same without it, paired
// round by round (the four homes interleaved, the order rotated each round); ratio = with / without. The added
// milliseconds per model call (the paired median and its 95% interval) are in the detail. No budget: a figure to read,
// not a threshold.
import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { BenchContext, Figure, Suite } from '../bench-types.js';
import { startFakeLlm } from '../../e2e/support/fake-llm.js';
import { PINNED_HERMES_VERSION, type HermesVersion } from '../../e2e/support/hermes-versions.js';
import { CLI } from '../../support/paths.js';
import { startDaemonProcess } from '../../support/processes.js';
import {
  dist,
  hermesFor,
  homeFor,
  hooksPerTurn,
  medianInterval,
  MODEL_LATENCY_MS,
  planOf,
  pluginSupported,
  r1,
  r3,
  scriptFor,
  setModelCallHook,
  turn,
  type BenchHome,
  type Plan,
  type Rig,
  type Transport,
  type Turn,
} from './hermes-turn.js';

const run = promisify(execFile);

type Home = `${Transport}.${'with' | 'without'}`;

/** Whether this build's `install` takes `--no-model-calls` (leave post_api_request out). */
async function noModelCallsSupported(): Promise<boolean> {
  const { stdout } = await run(process.execPath, [CLI, 'install', '--help']);
  return /--no-model-calls\b/.test(stdout);
}

async function measureVersion(
  ctx: BenchContext,
  plan: Plan,
  version: HermesVersion,
  transports: readonly Transport[],
  noModelCalls: boolean,
): Promise<Figure[]> {
  await hermesFor(ctx, version);
  const arrivals: number[] = [];
  const llm = await startFakeLlm({ steps: scriptFor([...new Set([0, ...plan.tools])], arrivals) });
  const base = ctx.tmp('model-call-hook-');
  const daemon = await startDaemonProcess({ AEP_PORT: '' }, { historyDir: path.join(base, 'log'), stateDir: path.join(base, 'state') });
  const homes = new Map<Home, BenchHome>();
  const adjusted = new Map<Home, string>();
  const figures: Figure[] = [];
  try {
    for (const t of transports) {
      for (const on of [true, false]) {
        const key: Home = `${t}.${on ? 'with' : 'without'}`;
        const installed = await homeFor(llm, daemon, version, t, !on && noModelCalls ? ['--no-model-calls'] : []);
        const { home, adjusted: how } = setModelCallHook(installed, on);
        homes.set(key, home);
        adjusted.set(key, how || (!on && noModelCalls ? 'install --no-model-calls' : 'as installed'));
      }
    }
    const keys = [...homes.keys()];
    const rig: Rig<Home> = { llm, arrivals, daemon, homes };
    // a home's first run seeds it (skills, state.db) and checks its hook count: once per home, untimed
    for (const k of keys) await turn(rig, k, 0);
    const pairs = plan.pairs(version);
    for (const tools of plan.tools) {
      const calls = tools + 1;
      const load0 = os.loadavg()[0]!;
      const turns = new Map<Home, Turn[]>(keys.map((k) => [k, []]));
      for (let round = 0; round < pairs; round++) {
        for (let i = 0; i < keys.length; i++) {
          const k = keys[(i + round) % keys.length]!;
          turns.get(k)!.push(await turn(rig, k, tools));
        }
        ctx.log(
          `model-call-hook ${version} tools=${tools} round ${round + 1}/${pairs}: ${keys.map((k) => `${k} ${Math.round(turns.get(k)!.at(-1)!.window)} ms`).join(', ')}`,
        );
      }
      const load = [r1(load0), r1(os.loadavg()[0]!)];
      for (const t of transports) {
        const withHook = turns.get(`${t}.with`)!;
        const without = turns.get(`${t}.without`)!;
        const perCall = (xs: readonly Turn[]) => xs.map((x) => x.window / calls);
        const added = withHook.map((x, i) => (x.window - without[i]!.window) / calls);
        const addedLoop = withHook.map((x, i) => (x.loop - without[i]!.loop) / Math.max(1, tools));
        const measure = dist(perCall(withHook));
        const yardstick = dist(perCall(without));
        const v = version === PINNED_HERMES_VERSION ? '' : `.hermes${version.replace(/\./g, '_')}`;
        figures.push({
          id: `model_call_hook${v}.${t}.tools${tools}`,
          label: `Hermes ${version} -z turn, ${calls} model call${calls === 1 ? '' : 's'} (${tools} tool calls), ${t} transport: time per model call with post_api_request registered vs without`,
          measure,
          yardstick: { label: 'the same turn without post_api_request (paired round by round)', measure: yardstick },
          ratio: r3(measure.value / yardstick.value),
          detail: {
            hermes_version: version,
            transport: t,
            tool_calls: tools,
            model_calls: calls,
            model_latency_ms: MODEL_LATENCY_MS,
            hooks_per_turn: { with: hooksPerTurn(homes.get(`${t}.with`)!, tools), without: hooksPerTurn(homes.get(`${t}.without`)!, tools) },
            added_ms_per_model_call: { ...dist(added), ci95_of_median: medianInterval(added) },
            added_ms_per_turn: dist(withHook.map((x, i) => x.window - without[i]!.window)),
            // first → last model request: the first `tools` post_api_request hooks and the tool calls between them
            ...(tools > 0 ? { tool_loop_added_ms_per_model_call: dist(addedLoop) } : {}),
            adjusted: { with: adjusted.get(`${t}.with`), without: adjusted.get(`${t}.without`) },
            window: 'first chat request at the fake model → the final answer on Hermes stdout, divided by the model calls of the turn',
            pairing: `${pairs} rounds, ${keys.join('/')} interleaved, order rotated each round`,
            load_avg_1m: load,
            cores: os.availableParallelism(),
          },
        });
      }
    }
  } finally {
    await daemon.stop();
    await llm.close();
    for (const h of homes.values()) rmSync(path.dirname(h.home.home), { recursive: true, force: true });
  }
  return figures;
}

export const modelCallHook: Suite = {
  name: 'model-call-hook',
  about:
    'per-model-call cost of the post_api_request hook on the real Hermes (-z turns, fake model at 50 ms): shell and plugin transport, each with the hook registered vs without, paired',
  async run(ctx) {
    const plan = planOf(ctx);
    const transports: Transport[] = (await pluginSupported()) ? ['shell', 'plugin'] : ['shell'];
    if (!transports.includes('plugin')) ctx.log('model-call-hook: the plugin transport is not available in this build: shell only');
    const noModelCalls = await noModelCallsSupported();
    const figures: Figure[] = [];
    for (const version of plan.versions) figures.push(...(await measureVersion(ctx, plan, version, transports, noModelCalls)));
    return figures;
  },
};
