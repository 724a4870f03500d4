// Suite `hermes-turn`: what hermes-aep adds to a turn of the REAL Hermes Agent, the number a user feels.
//
// Hermes (the pinned release, and the newest one in the full run) runs `hermes -z` turns against the e2e tier's fake
// model, which answers every request after a FIXED latency and asks for 0, 5, 12 or 20 sequential `todo` tool calls (a
// built-in tool with no process, file or network behind it, so the tool's own time adds no noise). Configurations:
// `none` (no hooks in config.yaml), `shell` (`install --transport shell`: a shim process per hook, to a daemon on its
// Unix socket as users get it), `plugin` (`install --transport plugin`, when the built CLI offers it; otherwise every
// figure's detail says it is not available in this build), `default` (`install` without --transport, given this
// Hermes: whatever it picks) and `peer` (Grafana's agento11y-hermes from PyPI: suites/turn-peer.ts; when it cannot
// be installed or does not export, every figure's detail says why). Per release and tool count, one more figure,
// `default_vs_peer`, sets the default's added time against the peer's and against the turn without an observer.
//
// What is timed, and why. A `hermes -z` process spends 4-6 s importing Python and building the agent before the first
// model request, and that phase alone varies by hundreds of ms between identical runs (seconds on a busy machine):
// timing the whole process would bury a millisecond effect under start-up noise. So the turn is timed from inside the
// run: from the fake model receiving the turn's FIRST chat request to Hermes writing the final answer on stdout (it
// does so, and flushes, right after `run_conversation` returns). That window holds the whole agent loop (every model
// call, every tool call with its pre/post hooks) and the turn-end hook (on_session_end); it leaves out the two hooks
// Hermes fires before its first model request (on_session_start, pre_llm_call), start-up and shut-down. Hence the
// per-hook figure divides the added window time by the hooks fired INSIDE the window (the daemon's /healthz `hooks`
// delta for the turn, minus those two). What the window leaves out is still measured and kept in the detail, with
// its wider spread: `shutdown` (answer → process exit: a transport that flushes at exit pays there) and
// `whole_process` (spawn → exit: the full cost of a `hermes -z` run, all hooks and any start-up cost included).
// Every configuration's turn runs interleaved with a `none` turn, the order rotated every round, and the added time
// is the per-round difference (paired), so machine noise hits both alike.
//
// A turn counts only when it did its work: Hermes exited 0 and printed the scripted answer, the fake model served
// exactly tools+1 chat requests, the daemon counted exactly the hooks the turn fires (none for `none`; one
// post_api_request per model call more where the home registers it: `install` puts every REGISTERED_HOOKS entry in
// config.yaml, the plugin registers its own HOOKS) and its AEP history gained the turn's session, run, tool and model
// call events. Anything else throws: an error, never a figure.
//
// The helpers are exported for the `model-call-hook` suite (suites/model-call-hook.ts), which times the same turns
// with and without post_api_request registered.
import { execFile, spawn } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { parse, parseDocument } from 'yaml';
import type { BenchContext, Figure, Measure, Suite } from '../bench-types.js';
import { startFakeLlm, type FakeLlm, type FakeReply, type FakeStep } from '../../e2e/support/fake-llm.js';
import { makeHermesHome, type HermesHome } from '../../e2e/support/hermes.js';
import { hermesBinEnv, PINNED_HERMES_VERSION, type HermesVersion } from '../../e2e/support/hermes-versions.js';
import { CLI, ROOT } from '../../support/paths.js';
import { startDaemonProcess, waitFor, type DaemonProcess } from '../../support/processes.js';
import { readLogs } from '../../support/stream-invariants.js';
import { defaultHome, PEER_ABOUT, PEER_VERSION, peerBin, peerHome, startOtlpSink } from './turn-peer.js';

const run = promisify(execFile);

export type Transport = 'shell' | 'plugin';
/** `peer`: Grafana's agento11y-hermes; `default`: what install without --transport picks (suites/turn-peer.ts) */
export type Config = 'none' | Transport | 'peer' | 'default';

/** The fake model's fixed answer latency (every request, tool call or final text). */
export const MODEL_LATENCY_MS = 50;
/** Hooks Hermes fires before its first model request: outside the timed window. */
export const HOOKS_BEFORE_FIRST_REQUEST = 2; // on_session_start, pre_llm_call
const ANSWER = 'hermes-turn bench: done';

export interface Plan {
  readonly versions: readonly HermesVersion[];
  readonly tools: readonly number[];
  /** rounds per tool count for a release */
  pairs(version: HermesVersion): number;
}

/**
 * Short (CI, ~3 min with five configurations): the pinned release, 0 and 12 tool calls (12: issue 25's turn), 3
 * rounds. Full (~40 min on 2 cores): the pinned release with 0/5/12/20 tool calls in 8 rounds, the newest release the
 * same in 4. BENCH_TURN_VERSIONS, BENCH_TURN_TOOLS (comma lists) and BENCH_TURN_PAIRS override (one 12-tool run of
 * both releases in 5 rounds: ~5.5 min).
 */
export function planOf(ctx: BenchContext): Plan {
  const env = process.env;
  const list = (v: string | undefined) => v?.split(',').filter(Boolean);
  return {
    versions: (list(env.BENCH_TURN_VERSIONS) as HermesVersion[] | undefined) ?? (ctx.short ? [PINNED_HERMES_VERSION] : [PINNED_HERMES_VERSION, '0.19.0']),
    tools: list(env.BENCH_TURN_TOOLS)?.map(Number) ?? (ctx.short ? [0, 12] : [0, 5, 12, 20]),
    pairs: (v) => Number(env.BENCH_TURN_PAIRS ?? (ctx.short ? 3 : v === PINNED_HERMES_VERSION ? 8 : 4)),
  };
}

const sorted = (xs: readonly number[]) => [...xs].sort((a, b) => a - b);
const quantile = (xs: readonly number[], q: number) => sorted(xs)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!;
export const r1 = (x: number) => Math.round(x * 10) / 10;
export const r3 = (x: number) => Math.round(x * 1000) / 1000;
export const dist = (xs: readonly number[], unit = 'ms'): Measure => ({ value: r1(quantile(xs, 0.5)), p95: r1(quantile(xs, 0.95)), n: xs.length, unit });

/** A distribution-free 95% interval for a median (order statistics; the whole range below 6 samples). */
export function medianInterval(xs: readonly number[]): [number, number] {
  const s = sorted(xs);
  const k = Math.max(0, Math.floor((s.length - 1.96 * Math.sqrt(s.length)) / 2));
  return [r1(s[k]!), r1(s[s.length - 1 - k]!)];
}

/** The `hermes` binary of a release: the bench runner's provisioning when it offers one, else the script itself. */
export async function hermesFor(ctx: BenchContext, version: HermesVersion): Promise<string> {
  // bench-types.ts may offer `provision` (the runner's, run once per run); a context without it runs the script here
  const c = ctx as BenchContext & { provision?: (script: string, env?: Record<string, string>) => Promise<ReadonlyMap<string, string>> };
  const env = { HERMES_VERSION: version };
  const bin = c.provision
    ? (await c.provision('provision-hermes.sh', env)).get('HERMES')
    : /^HERMES=(.+)$/m.exec((await run('bash', [path.join(ROOT, 'scripts', 'provision-hermes.sh')], { env: { ...process.env, ...env } })).stdout)?.[1];
  if (!bin) throw new Error(`provision-hermes.sh ${version} printed no HERMES= line`);
  process.env[hermesBinEnv(version)] = bin; // makeHermesHome finds the release's binary there
  return bin;
}

/** Whether this build's CLI installs the plugin transport (`install --help` lists `--transport`). */
export async function pluginSupported(): Promise<boolean> {
  const { stdout } = await run(process.execPath, [CLI, 'install', '--help']);
  return /--transport\b/.test(stdout);
}

/** The fake model: one scripted step per tool count; every reply notes when its request arrived. */
export function scriptFor(toolCounts: readonly number[], arrivals: number[]): FakeStep[] {
  const at = (reply: FakeReply) => (): FakeReply => {
    arrivals.push(performance.now());
    return { ...reply, delayMs: MODEL_LATENCY_MS };
  };
  return toolCounts.map((n) => ({
    name: `tools${n}`,
    marker: `HERMES-TURN-BENCH tools=${n};`,
    replies: Array.from({ length: n }, () => at({ type: 'tool_calls', calls: [{ name: 'todo', arguments: {} }] })),
    final: at({ type: 'text', content: ANSWER }),
  }));
}

export interface Turn {
  /** first chat request → the answer on stdout */
  readonly window: number;
  /** the answer on stdout → process exit */
  readonly shutdown: number;
  /** spawn → process exit */
  readonly whole: number;
  /** first → last chat request: the tool calls with their pre/post hooks, no start-up and no shut-down */
  readonly loop: number;
  /** hooks the daemon counted for this turn */
  readonly hooks: number;
}

/** A Hermes home the bench runs turns in, and whether its hooks include post_api_request (one per model call). */
export interface BenchHome {
  readonly home: HermesHome;
  /** none: no hooks at all; peer: no hooks of ours (Grafana's plugin in the Hermes venv) */
  readonly transport: Transport | 'none' | 'peer';
  readonly modelCallHook: boolean;
}

export interface Rig<K extends string = Config> {
  readonly llm: FakeLlm;
  readonly arrivals: number[];
  readonly daemon: DaemonProcess;
  readonly homes: ReadonlyMap<K, BenchHome>;
}

const countTypes = (d: DaemonProcess): Map<string, number> => {
  const n = new Map<string, number>();
  for (const lane of readLogs(d.historyDir).values()) for (const e of lane) n.set(e.type, (n.get(e.type) ?? 0) + 1);
  return n;
};

/** The hooks one `-z` turn with `tools` tool calls fires in a home: 2 per tool call + on_session_start, pre_llm_call, on_session_end (no on_session_finalize), + 1 per model call with post_api_request. */
export function hooksPerTurn(b: BenchHome, tools: number): number {
  if (b.transport === 'none' || b.transport === 'peer') return 0;
  return 2 * tools + 3 + (b.modelCallHook ? tools + 1 : 0);
}

/**
 * Hermes's background review off in every bench home: from 10 tool iterations on (`skills.creation_nudge_interval`,
 * `memory.nudge_interval`, default 10; Hermes 0.18.2 agent/agent_init.py, agent/turn_finalizer.py,
 * agent/background_review.py) a 12-tool turn starts a review agent on a thread after its answer, whose own hooks
 * (a `pre_llm_call`, ...) reach the daemon or not depending on how soon the `-z` process exits: a turn's hook count,
 * and its time, would then depend on a race that has nothing to do with the transport measured.
 */
export const NO_BACKGROUND_REVIEW = ['skills:', '  creation_nudge_interval: 0', 'memory:', '  nudge_interval: 0'].join('\n');

/** One `hermes -z` turn with `tools` tool calls in the home `config`, checked to have done all its work. */
export async function turn<K extends string>(rig: Rig<K>, config: K, tools: number): Promise<Turn> {
  const b = rig.homes.get(config)!;
  const h = b.home;
  const before = await rig.daemon.health();
  const hooksBefore = before.hooks as number;
  const typesBefore = b.transport === 'none' || b.transport === 'peer' ? undefined : countTypes(rig.daemon);
  const served = rig.llm.requests.length;
  rig.arrivals.length = 0;
  const child = spawn(h.bin, ['-z', `HERMES-TURN-BENCH tools=${tools}; go`], { env: h.env, cwd: h.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  const t0 = performance.now();
  let out = '';
  let answered = NaN;
  child.stdout.on('data', (c: Buffer) => {
    out += c.toString('utf8');
    if (Number.isNaN(answered) && out.includes(ANSWER)) answered = performance.now();
  });
  child.stderr.on('data', (c: Buffer) => (out += c.toString('utf8')));
  const killer = setTimeout(() => child.kill('SIGKILL'), 300_000);
  // the exit is timed when it happens; the output is read whole only at 'close' (its last chunk may come after 'exit')
  let tExit = NaN;
  child.once('exit', () => (tExit = performance.now()));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (c) => resolve(c));
  }).finally(() => clearTimeout(killer));
  const fail = (why: string) => new Error(`hermes-turn: ${h.version} ${config} tools=${tools}: ${why}\n${out.slice(-3000)}`);
  if (code !== 0) throw fail(`Hermes exited ${code}`);
  if (Number.isNaN(answered)) throw fail('Hermes did not print the scripted answer');
  const chats = rig.llm.requests.slice(served).filter((r) => r.method === 'POST' && r.step === `tools${tools}`).length;
  if (chats !== tools + 1 || rig.arrivals.length !== tools + 1) throw fail(`the fake model served ${chats} scripted requests, expected ${tools + 1}`);
  const expected = hooksPerTurn(b, tools);
  // the plugin hands observations to a background thread: they may land just after the process exits
  const hooks = await waitFor(
    `${expected} hooks counted`,
    async () => {
      const n = ((await rig.daemon.health()).hooks as number) - hooksBefore;
      return n >= expected ? n : undefined;
    },
    10_000,
  ).catch(async () => ((await rig.daemon.health()).hooks as number) - hooksBefore);
  if (hooks !== expected) {
    const after = await rig.daemon.health();
    const seen = (h: Record<string, any>) => JSON.stringify({ hooks: h.hooks, failed: h.hooks_failed, spool: h.spool, transport: h.transport });
    throw fail(`the daemon counted ${hooks} hooks, expected ${expected} (health before ${seen(before)}, after ${seen(after)})`);
  }
  if (typesBefore) {
    await waitFor('history written', async () => ((await rig.daemon.health()).sinks.log.queued === 0 ? true : undefined));
    const after = countTypes(rig.daemon);
    const grew = (t: string) => (after.get(t) ?? 0) - (typesBefore.get(t) ?? 0);
    const want: Record<string, number> = {
      'session.started': 1,
      'run.started': 1,
      'tool.requested': tools,
      'tool.completed': tools,
      'x.hermes.model.call': b.modelCallHook ? tools + 1 : 0,
    };
    for (const [t, n] of Object.entries(want)) if (grew(t) !== n) throw fail(`the AEP history gained ${grew(t)} ${t}, expected ${n}`);
  }
  return { window: answered - rig.arrivals[0]!, shutdown: tExit - answered, whole: tExit - t0, loop: rig.arrivals.at(-1)! - rig.arrivals[0]!, hooks };
}

/** A fresh home with hermes-aep installed for `transport` (`extra`: more install arguments), or nothing for `none`. */
export async function homeFor(
  llm: FakeLlm,
  daemon: DaemonProcess,
  version: HermesVersion,
  transport: Transport | 'none',
  extra: readonly string[] = [],
): Promise<BenchHome> {
  const hookEnv = { AEP_STATE_DIR: daemon.stateDir };
  const h = await makeHermesHome({ modelUrl: llm.url, hookEnv, version, install: false, extraYaml: NO_BACKGROUND_REVIEW });
  if (transport !== 'none') {
    // named even for shell: without --transport, install picks one from the Hermes it finds (the `default` configuration)
    const args = ['install', '--transport', transport, ...extra];
    await run(process.execPath, [CLI, ...args], { env: { ...process.env, ...hookEnv, HERMES_HOME: h.home } });
  }
  return { home: h, transport, modelCallHook: transport !== 'none' && registersModelCallHook(h.home, transport) };
}

const MODEL_CALL_HOOK_NAME = 'post_api_request';

/** The plugin copy's `HOOKS = (...)` tuple (plugin/hermes-aep/__init__.py), as written. */
const PLUGIN_HOOKS = /^HOOKS = \(([^)]*)\)/m;

/** Whether an installed home fires post_api_request: a `hooks:` entry in config.yaml (shell), the plugin copy's HOOKS (plugin). */
export function registersModelCallHook(home: string, transport: Transport): boolean {
  if (transport === 'shell') {
    const cfg = parse(readFileSync(path.join(home, 'config.yaml'), 'utf8')) as { hooks?: Record<string, unknown> } | null;
    return Array.isArray(cfg?.hooks?.[MODEL_CALL_HOOK_NAME]) && (cfg.hooks[MODEL_CALL_HOOK_NAME] as unknown[]).length > 0;
  }
  const m = PLUGIN_HOOKS.exec(readFileSync(path.join(home, 'plugins', 'hermes-aep', '__init__.py'), 'utf8'));
  if (!m) throw new Error(`hermes-turn: the plugin copy in ${home} has no HOOKS = (...) tuple`);
  return m[1]!.includes(`"${MODEL_CALL_HOOK_NAME}"`);
}

/**
 * Make an installed home register post_api_request (`on`) or not, when install did not already: the shell home's
 * config.yaml entry removed (install writes every REGISTERED_HOOKS entry), or the plugin copy's HOOKS tuple (and
 * plugin.yaml's provides_hooks) with the name added or taken out. Returns what was changed ('' for nothing). Only the
 * bench's own temporary homes are touched.
 */
export function setModelCallHook(b: BenchHome, on: boolean): { home: BenchHome; adjusted: string } {
  if (b.transport === 'none' || b.transport === 'peer' || b.modelCallHook === on) return { home: b, adjusted: '' };
  const dir = b.home.home;
  let adjusted: string;
  if (b.transport === 'shell') {
    if (on) throw new Error('hermes-turn: this install writes no post_api_request hook into config.yaml, and the bench does not add one');
    const file = path.join(dir, 'config.yaml');
    const doc = parseDocument(readFileSync(file, 'utf8'));
    doc.deleteIn(['hooks', MODEL_CALL_HOOK_NAME]);
    writeFileSync(file, doc.toString());
    adjusted = `config.yaml: the hooks.${MODEL_CALL_HOOK_NAME} entry install wrote was removed`;
  } else {
    const init = path.join(dir, 'plugins', 'hermes-aep', '__init__.py');
    const src = readFileSync(init, 'utf8');
    const m = PLUGIN_HOOKS.exec(src)!;
    const names = m[1]!
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean)
      .filter((x) => x !== `"${MODEL_CALL_HOOK_NAME}"`);
    if (on) names.push(`"${MODEL_CALL_HOOK_NAME}"`);
    writeFileSync(init, src.replace(PLUGIN_HOOKS, `HOOKS = (${names.join(', ')})`));
    const yamlFile = path.join(dir, 'plugins', 'hermes-aep', 'plugin.yaml');
    const doc = parseDocument(readFileSync(yamlFile, 'utf8'));
    const provides = ((doc.toJS() as { provides_hooks?: string[] }).provides_hooks ?? []).filter((x) => x !== MODEL_CALL_HOOK_NAME);
    doc.set('provides_hooks', on ? [...provides, MODEL_CALL_HOOK_NAME] : provides);
    writeFileSync(yamlFile, doc.toString());
    adjusted = `the plugin copy's HOOKS and provides_hooks: ${MODEL_CALL_HOOK_NAME} ${on ? 'added (this build registers none)' : 'taken out'}`;
  }
  const modelCallHook = registersModelCallHook(dir, b.transport);
  if (modelCallHook !== on) throw new Error(`hermes-turn: could not ${on ? 'add' : 'remove'} ${MODEL_CALL_HOOK_NAME} in ${dir}`);
  return { home: { ...b, modelCallHook }, adjusted };
}

/** The figures of one release: every transport × tool count, each paired round by round with `none`. */
async function measureVersion(ctx: BenchContext, plan: Plan, version: HermesVersion, transports: readonly Transport[], baseNotes: Record<string, string>) {
  const bin = await hermesFor(ctx, version);
  const notes: Record<string, string> = { ...baseNotes };
  const peer = await peerBin(ctx, version);
  if (!peer.ok) {
    notes.peer = `not measured for Hermes ${version}: ${peer.why}`;
    ctx.log(`hermes-turn: ${notes.peer}`);
  }
  const sink = await startOtlpSink();
  const arrivals: number[] = [];
  const llm = await startFakeLlm({ steps: scriptFor([...new Set([0, ...plan.tools])], arrivals) });
  const base = ctx.tmp('hermes-turn-');
  // socket only, as users run it; no span export (the window measures the hook path, not the exporter)
  const daemon = await startDaemonProcess({ AEP_PORT: '' }, { historyDir: path.join(base, 'log'), stateDir: path.join(base, 'state') });
  const configs: Config[] = ['none', ...transports];
  const homes = new Map<Config, BenchHome>();
  const figures: Figure[] = [];
  try {
    for (const c of ['none', ...transports] as const) homes.set(c, await homeFor(llm, daemon, version, c));
    const chosen = await defaultHome(llm, daemon, version, bin);
    homes.set('default', chosen.home);
    configs.push('default');
    notes.default_transport = chosen.line;
    if (peer.ok) {
      homes.set('peer', await peerHome(llm, version, peer.bin, sink));
      configs.push('peer');
    }
    const rig: Rig = { llm, arrivals, daemon, homes };
    // a home's first run seeds it (skills, state.db): once per home, untimed
    for (const c of configs) await turn(rig, c, 0);
    if (peer.ok) {
      // enabled means it exported: its OTLP requests reached the sink after its seeding turn
      const exported = await waitFor('the peer exported', async () => (sink.requests() > 0 ? true : undefined), 15_000).catch(() => false);
      if (!exported) {
        configs.splice(configs.indexOf('peer'), 1);
        notes.peer = `not measured for Hermes ${version}: agento11y-hermes sent no OTLP request to the sink after a turn (not loaded, or not exporting)`;
        ctx.log(`hermes-turn: ${notes.peer}`);
      } else notes.peer = PEER_ABOUT;
    }
    const pairs = plan.pairs(version);
    for (const tools of plan.tools) {
      const load0 = os.loadavg()[0]!;
      const turns = new Map<Config, Turn[]>(configs.map((c) => [c, []]));
      for (let round = 0; round < pairs; round++) {
        for (let i = 0; i < configs.length; i++) {
          const c = configs[(i + round) % configs.length]!;
          turns.get(c)!.push(await turn(rig, c, tools));
        }
        ctx.log(
          `hermes-turn ${version} tools=${tools} round ${round + 1}/${pairs}: ${configs.map((c) => `${c} ${Math.round(turns.get(c)!.at(-1)!.window)} ms`).join(', ')}`,
        );
      }
      const load = [r1(load0), r1(os.loadavg()[0]!)];
      const none = turns.get('none')!;
      const measured = configs.filter((c): c is Exclude<Config, 'none'> => c !== 'none');
      const addedOf = (c: Config) => turns.get(c)!.map((x, i) => x.window - none[i]!.window);
      const v = version === PINNED_HERMES_VERSION ? '' : `.hermes${version.replace(/\./g, '_')}`;
      for (const t of measured) {
        const mine = turns.get(t)!;
        const added = mine.map((x, i) => x.window - none[i]!.window);
        const addedWhole = mine.map((x, i) => x.whole - none[i]!.whole);
        const addedLoop = mine.map((x, i) => x.loop - none[i]!.loop);
        const addedShutdown = mine.map((x, i) => x.shutdown - none[i]!.shutdown);
        const hooks = mine[0]!.hooks;
        const inWindow = Math.max(0, hooks - HOOKS_BEFORE_FIRST_REQUEST);
        const measure = dist(mine.map((x) => x.window));
        const yardstick = dist(none.map((x) => x.window));
        figures.push({
          id: `hermes_turn${v}.${t}.tools${tools}`,
          label: `Hermes ${version} -z turn, ${tools} tool calls, ${labelOf(t, homes.get(t)!)} (first model request → answer) vs not installed`,
          measure,
          yardstick: { label: 'the same turn, hermes-aep not installed (paired round by round)', measure: yardstick },
          ratio: r3(measure.value / yardstick.value),
          detail: {
            hermes_version: version,
            transport: t,
            tool_calls: tools,
            model_latency_ms: MODEL_LATENCY_MS,
            hooks_per_turn: hooks,
            post_api_request: homes.get(t)!.modelCallHook,
            hooks_in_window: inWindow,
            added_ms_per_turn: { ...dist(added), ci95_of_median: medianInterval(added) },
            ...(inWindow > 0 ? { added_ms_per_hook: dist(added.map((a) => a / inWindow)) } : {}),
            // the tool calls alone (first → last model request: 2 hooks per call, nothing else): a second, tighter view
            ...(tools > 0 && inWindow > 0 ? { tool_loop: { added_ms: dist(addedLoop), added_ms_per_hook: dist(addedLoop.map((a) => a / (2 * tools))) } } : {}),
            shutdown: { with_ms: dist(mine.map((x) => x.shutdown)), none_ms: dist(none.map((x) => x.shutdown)), added_ms: dist(addedShutdown) },
            whole_process: {
              with_ms: dist(mine.map((x) => x.whole)),
              none_ms: dist(none.map((x) => x.whole)),
              added_ms: { ...dist(addedWhole), ci95_of_median: medianInterval(addedWhole) },
              ...(hooks > 0 ? { added_ms_per_hook: r1(quantile(addedWhole, 0.5) / hooks) } : {}),
            },
            window:
              'first chat request at the fake model → the final answer on Hermes stdout; leaves out Python start-up, shut-down (see shutdown, whole_process) and the 2 hooks fired before the first model request',
            pairing: `${pairs} rounds, ${configs.join('/')} interleaved, order rotated each round`,
            load_avg_1m: load,
            cores: os.availableParallelism(),
            ...notes,
          },
        });
      }
      figures.push(defaultVsPeer(version, v, tools, addedOf('default'), configs.includes('peer') ? addedOf('peer') : undefined, none, notes));
    }
  } finally {
    await daemon.stop();
    await llm.close();
    await sink.close();
    for (const h of homes.values()) rmSync(path.dirname(h.home.home), { recursive: true, force: true });
  }
  return figures;
}

const labelOf = (c: Config, b: BenchHome): string =>
  c === 'peer' ? `the peer agento11y-hermes ${PEER_VERSION}` : c === 'default' ? `the default transport (install picks ${b.transport})` : `${c} transport`;

/**
 * Issue 25 item 3's comparison, from the same interleaved rounds: the default install's added time against the peer's
 * (ratio = default / peer, medians of the per-round differences), and against the turn without any observer, in %.
 * Without a measured peer the figure is the default's added time alone, and its detail says why the peer is missing.
 */
function defaultVsPeer(
  version: HermesVersion,
  v: string,
  tools: number,
  addedDefault: number[],
  addedPeer: number[] | undefined,
  none: readonly Turn[],
  notes: Record<string, string>,
): Figure {
  const med = (xs: readonly number[]) => quantile(xs, 0.5);
  const noneWindow = med(none.map((x) => x.window));
  const added = {
    default: { ...dist(addedDefault), ci95_of_median: medianInterval(addedDefault) },
    ...(addedPeer ? { peer: { ...dist(addedPeer), ci95_of_median: medianInterval(addedPeer) } } : {}),
  };
  const detail = {
    hermes_version: version,
    tool_calls: tools,
    default_transport: notes.default_transport,
    peer: notes.peer,
    added_ms_per_turn: added,
    none_window_ms: r1(noneWindow),
    default_vs_none_pct: r1((100 * med(addedDefault)) / noneWindow),
    ...(addedPeer ? { peer_vs_none_pct: r1((100 * med(addedPeer)) / noneWindow) } : {}),
    goal: 'issue 25: the default adds less than the peer (ratio < 1) and at most 5 % of the turn without an observer',
  };
  return {
    id: `hermes_turn${v}.default_vs_peer.tools${tools}`,
    label: `Hermes ${version} -z turn, ${tools} tool calls: time the default install adds vs time agento11y-hermes adds`,
    measure: dist(addedDefault),
    ...(addedPeer ? { yardstick: { label: `added by agento11y-hermes ${PEER_VERSION} (same rounds)`, measure: dist(addedPeer) } } : {}),
    ratio: addedPeer ? r3(med(addedDefault) / med(addedPeer)) : r3(med(addedDefault) / noneWindow),
    detail: addedPeer ? detail : { ...detail, ratio: 'no peer measured: the ratio is default added / none window' },
  };
}

export const hermesTurn: Suite = {
  name: 'hermes-turn',
  async run(ctx) {
    const plan = planOf(ctx);
    const plugin = await pluginSupported();
    const transports: Transport[] = plugin ? ['shell', 'plugin'] : ['shell'];
    const notes: Record<string, string> = plugin ? {} : { plugin: 'not available in this build: `hermes-aep install --help` lists no --transport' };
    if (!plugin) ctx.log('hermes-turn: the plugin transport is not available in this build (install --help lists no --transport): shell only');
    const figures: Figure[] = [];
    for (const version of plan.versions) figures.push(...(await measureVersion(ctx, plan, version, transports, notes)));
    return figures;
  },
};
