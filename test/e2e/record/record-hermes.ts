/**
 * Records real Hermes shell-hook envelopes as fixtures (fixtures/hermes-recorded*):
 * every scenario gets a fresh offline HERMES_HOME whose adapter hooks (REGISTERED_HOOKS)
 * point at recorder-hook.cjs (HERMES_ACCEPT_HOOKS=1), a scripted fake model on
 * loopback, and one scripted drive of the CLI (`-z`, `chat -q`, the interactive
 * CLI under tmux, `hooks test|doctor`). The envelopes land one per line, in
 * firing order, with the machine's temporary paths replaced (README of the
 * fixture set).
 *
 *   npm run build && node dist/test/e2e/record/record-hermes.js --version 0.19.0 \
 *     --out fixtures/hermes-recorded-0.19.0/raw [--only name,name]
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { REGISTERED_HOOKS } from '../../../src/hermes/envelope.js';
import { ROOT } from '../../support/paths.js';
import { waitFor } from '../../support/processes.js';
import { startFakeLlm, text, toolCall, type FakeLlm, type FakeLlmOptions, type FakeStep } from '../support/fake-llm.js';
import { HermesTty, makeHermesHome, runHermes, type HermesHome } from '../support/hermes.js';
import { E2E_HERMES_VERSIONS, hermesBinEnv, type HermesVersion } from '../support/hermes-versions.js';
import { MODEL_CALLS, modelCallsStep } from './model-calls.js';

const run = promisify(execFile);

interface Ctx {
  readonly version: HermesVersion;
  readonly home: HermesHome;
  readonly llm: FakeLlm;
  /** the envelopes recorded so far in this scenario */
  envs(): Array<Record<string, any>>;
  count(hook: string, pred?: (e: Record<string, any>) => boolean): number;
  waitCount(hook: string, n: number, pred?: (e: Record<string, any>) => boolean, ms?: number): Promise<void>;
  hermes(args: string[]): Promise<void>;
  tty(fn: (tty: HermesTty) => Promise<void>): Promise<void>;
}

interface Scenario {
  readonly name: string;
  readonly versions?: readonly HermesVersion[];
  readonly yaml?: string;
  readonly block?: boolean;
  readonly llm?: Partial<FakeLlmOptions>;
  readonly steps?: FakeStep[];
  readonly drive: (c: Ctx) => Promise<void>;
}

const DANGER = 'rm -rf /tmp/hermes-aep-danger-x';
const child: FakeStep = { marker: 'CHILD-GOAL', replies: [text('Child here: the subagent finished its small job.')] };
const delegate = (marker: string, delayMs = 0): FakeStep => ({
  marker,
  replies: [
    toolCall('delegate_task', { goal: 'CHILD-GOAL: say hello and stop.', context: 'A test delegation.' }),
    { type: 'text', content: 'Delegated.', delayMs },
  ],
});
const COLOUR = { question: 'Which colour should I use?', choices: ['red', 'green', 'blue'] };
const NAME = { question: 'What name should I use?' };
const liveTurnEnd = (e: Record<string, any>) => e.extra?.platform !== 'subagent';
/** the smart-approval review request (0.19.0) is the only tool-less request naming a security reviewer */
const reviewer = (verdict: string) => (v: { messages: Array<{ content?: unknown }> }) =>
  v.messages.some((m) => typeof m.content === 'string' && m.content.includes('security reviewer')) ? verdict : 'Fake session title';

const terminal: FakeStep = { marker: 'MARK-TERMINAL', replies: [toolCall('terminal', { command: 'echo hello' })] };
const danger: FakeStep = { marker: 'MARK-DANGER', replies: [toolCall('terminal', { command: DANGER })] };
const clarify: FakeStep = { marker: 'MARK-CLARIFY', replies: [toolCall('clarify', COLOUR)] };
const openClarify: FakeStep = { marker: 'MARK-OPEN-CLARIFY', replies: [toolCall('clarify', NAME)] };
const apiError = (status: number): FakeStep => ({
  marker: 'MARK-API-ERROR',
  replies: [{ type: 'error', status, message: status === 400 ? 'fake bad request' : 'fake upstream failure' }],
});

const oneshot = (name: string, prompt: string, steps: FakeStep[], more: Partial<Scenario> = {}): Scenario => ({
  name,
  steps,
  drive: (c) => c.hermes(['-z', prompt]),
  ...more,
});

/** Interactive approval: the model asks for a dangerous command; `answer` drives the prompt. */
const ttyDanger = (name: string, answer: (tty: HermesTty, c: Ctx) => Promise<void>, more: Partial<Scenario> = {}): Scenario => ({
  name,
  steps: [danger],
  drive: (c) =>
    c.tty(async (tty) => {
      tty.line('MARK-DANGER please clean up');
      await answer(tty, c);
      await c.waitCount('on_session_end', 1, liveTurnEnd);
    }),
  ...more,
});

const SCENARIOS: Scenario[] = [
  oneshot('oneshot-plain', 'MARK-PLAIN say hi', []),
  oneshot('oneshot-terminal', 'MARK-TERMINAL please run echo hello', [terminal]),
  oneshot('oneshot-tool-error-read-file', 'MARK-FAIL-READ read the missing file', [
    { marker: 'MARK-FAIL-READ', replies: [toolCall('read_file', { path: '/nonexistent/hermes-aep/missing.txt' })] },
  ]),
  oneshot('oneshot-terminal-exit-nonzero', 'MARK-FAIL-EXIT list a missing dir', [
    { marker: 'MARK-FAIL-EXIT', replies: [toolCall('terminal', { command: 'ls /nonexistent-hermes-aep-dir' })] },
  ]),
  oneshot('oneshot-clarify-choices', 'MARK-CLARIFY ask me a colour', [clarify]),
  oneshot('oneshot-clarify-open', 'MARK-OPEN-CLARIFY ask me a name', [openClarify]),
  oneshot('oneshot-subagent', 'MARK-SUBAGENT delegate a small job', [child, delegate('MARK-SUBAGENT')]),
  oneshot('oneshot-subagent-slow-parent', 'MARK-SUBAGENT-SLOW delegate a small job', [child, delegate('MARK-SUBAGENT-SLOW', 6000)]),
  oneshot('oneshot-api-error-400', 'MARK-API-ERROR trigger a failure', [apiError(400)]),
  oneshot('oneshot-api-error-500', 'MARK-API-500 trigger a retryable failure', [{ ...apiError(500), marker: 'MARK-API-500' }]),
  oneshot(
    'oneshot-blocked-by-hook',
    'MARK-BLOCK run a command',
    [{ marker: 'MARK-BLOCK', replies: [toolCall('terminal', { command: 'echo should-be-blocked' })] }],
    {
      block: true,
    },
  ),
  oneshot('oneshot-dangerous-command', 'MARK-DANGER please clean up', [danger]),
  oneshot('oneshot-model-calls', `${MODEL_CALLS.marker} run the command, then answer`, [modelCallsStep]),
  {
    name: 'chat-q-multiturn-resume',
    steps: [terminal],
    drive: async (c) => {
      await c.hermes(['chat', '-q', 'MARK-TERMINAL first turn', '-Q']);
      const session = c.envs().find((e) => e.hook_event_name === 'on_session_start')?.session_id as string;
      await c.hermes(['chat', '-q', 'MARK-PLAIN second turn', '-Q', '--resume', session]);
    },
  },
  {
    name: 'chat-q-api-error-400',
    steps: [apiError(400)],
    drive: (c) => c.hermes(['chat', '-q', 'MARK-API-ERROR trigger a failure', '-Q']),
  },
  ttyDanger('tty-approval-deny-new-exit', async (tty, c) => {
    await tty.waitScreen('Deny');
    tty.keys('4');
    await c.waitCount('on_session_end', 1, liveTurnEnd);
    await tty.waitScreen('❯');
    tty.line('/new');
    await tty.waitScreen('Approve Once', 30_000);
    tty.keys('1');
    await c.waitCount('on_session_reset', 1);
    await tty.waitScreen('❯');
    tty.line('MARK-PLAIN after new');
    await c.waitCount('on_session_end', 2, liveTurnEnd);
  }),
  ttyDanger('tty-approval-once', async (tty) => {
    await tty.waitScreen('Allow once');
    tty.keys('Enter');
  }),
  ttyDanger('tty-approval-timeout', (_tty, c) => c.waitCount('post_approval_response', 1, (e) => e.extra?.surface !== 'smart', 60_000), {
    yaml: 'approvals:\n  timeout: 5',
  }),
  // 0.19.0 only: the auxiliary model's verdict (approvals.mode: smart is the default there)
  ttyDanger('tty-approval-smart-approve', (_tty, c) => c.waitCount('post_approval_response', 1), {
    versions: ['0.19.0'],
    llm: { auxiliaryReply: reviewer('APPROVE') },
  }),
  ttyDanger(
    'tty-approval-smart-deny-override-once',
    async (tty, c) => {
      await c.waitCount('post_approval_response', 1);
      await tty.waitScreen(/once/i);
      tty.keys('Enter');
      await c.waitCount('post_approval_response', 2);
    },
    { versions: ['0.19.0'], llm: { auxiliaryReply: reviewer('DENY') } },
  ),
  {
    name: 'tty-clarify',
    steps: [clarify, openClarify],
    drive: (c) =>
      c.tty(async (tty) => {
        const clarified = (e: Record<string, any>) => e.tool_name === 'clarify';
        tty.line('MARK-CLARIFY ask me a colour');
        await tty.waitScreen('blue');
        tty.keys('2');
        await c.waitCount('on_session_end', 1, liveTurnEnd);
        await tty.waitScreen('❯');
        tty.line('MARK-CLARIFY again please');
        await c.waitCount('pre_tool_call', 2, clarified);
        await tty.waitScreen('Other');
        tty.keys('4');
        await new Promise((r) => setTimeout(r, 500));
        tty.line('teal, please');
        await c.waitCount('on_session_end', 2, liveTurnEnd);
        await tty.waitScreen('❯');
        tty.line('MARK-OPEN-CLARIFY name time');
        await c.waitCount('pre_tool_call', 3, clarified);
        await tty.waitScreen('What name should I use?');
        tty.line('Ada');
        await c.waitCount('on_session_end', 3, liveTurnEnd);
      }),
  },
  {
    name: 'tty-clarify-timeout',
    yaml: 'clarify:\n  timeout: 5',
    steps: [clarify],
    drive: (c) =>
      c.tty(async (tty) => {
        tty.line('MARK-CLARIFY ask me a colour');
        await c.waitCount('on_session_end', 1, liveTurnEnd, 60_000);
      }),
  },
  {
    name: 'tty-subagent',
    steps: [child, delegate('MARK-SUBAGENT')],
    drive: (c) =>
      c.tty(async (tty) => {
        tty.line('MARK-SUBAGENT delegate a small job');
        await c.waitCount('subagent_stop', 1, undefined, 60_000);
        // the background result re-enters as a parent turn of its own
        await c.waitCount('on_session_end', 2, liveTurnEnd, 60_000);
      }),
  },
  {
    name: 'tty-interrupt',
    steps: [{ marker: 'MARK-SLOW', replies: [{ type: 'text', content: 'Too late.', delayMs: 30_000 }] }],
    drive: (c) =>
      c.tty(async (tty) => {
        tty.line('MARK-SLOW take your time');
        await c.waitCount('pre_llm_call', 1);
        await new Promise((r) => setTimeout(r, 1500));
        tty.keys('C-c');
        await c.waitCount('on_session_end', 1, liveTurnEnd, 60_000);
      }),
  },
  {
    name: 'cli-hooks-test',
    drive: async (c) => {
      for (const event of REGISTERED_HOOKS) await c.hermes(['hooks', 'test', event]);
    },
  },
  {
    name: 'cli-hooks-doctor',
    drive: async (c) => {
      // doctor only runs allowlisted hooks: one discarded run writes the allowlist first
      const file = c.home.env.HERMES_AEP_REC_FILE;
      c.home.env.HERMES_AEP_REC_FILE = `${file}.priming`;
      await c.hermes(['-z', 'MARK-PLAIN say hi']);
      c.home.env.HERMES_AEP_REC_FILE = file;
      await c.hermes(['hooks', 'doctor']);
    },
  },
];

function hooksYaml(command: string): string {
  return ['hooks:', ...REGISTERED_HOOKS.flatMap((h) => [`  ${h}:`, `    - command: "${command}"`, '      timeout: 10'])].join('\n');
}

/** The machine's temporary paths → the fixture's stable ones (the README's replacements). */
function scrub(line: string, root: string): string {
  return line
    .split(`${root}/project`)
    .join('/home/user/project')
    .split(`${root}/hermes`)
    .join('/home/user/.hermes')
    .split(root)
    .join('/home/user')
    .split('/root/')
    .join('/home/user/');
}

async function record(version: HermesVersion, s: Scenario, outDir: string): Promise<void> {
  const t0 = Date.now();
  const llm = await startFakeLlm({ steps: [...(s.steps ?? []), { marker: 'MARK-PLAIN', replies: [text('Plain answer.')] }], ...s.llm });
  const command = `${process.execPath} ${path.join(ROOT, 'test', 'e2e', 'record', 'recorder-hook.cjs')}`;
  const home = await makeHermesHome({ modelUrl: llm.url, hookEnv: {}, version, install: false, extraYaml: [s.yaml ?? '', hooksYaml(command)].join('\n') });
  const root = path.dirname(home.home);
  const file = path.join(root, 'recorded.jsonl');
  Object.assign(home.env, { HERMES_ACCEPT_HOOKS: '1', HERMES_AEP_REC_FILE: file, ...(s.block ? { HERMES_AEP_REC_BLOCK: '1' } : {}) });
  delete home.env.AEP_HOOK_URL;
  const envs = () =>
    existsSync(file)
      ? readFileSync(file, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as Record<string, any>)
      : [];
  const count = (hook: string, pred: (e: Record<string, any>) => boolean = () => true) => envs().filter((e) => e.hook_event_name === hook && pred(e)).length;
  const ctx: Ctx = {
    version,
    home,
    llm,
    envs,
    count,
    waitCount: (hook, n, pred, ms = 90_000) => waitFor(`${n} × ${hook}`, () => (count(hook, pred) >= n ? true : undefined), ms, 100).then(() => undefined),
    hermes: async (args) => {
      const r = await runHermes(home, args, 180_000);
      if (r.code !== 0) console.warn(`[record] ${s.name}: hermes ${args.join(' ')} exited ${r.code}\n${r.stderr.slice(-2000)}`);
    },
    tty: async (fn) => {
      const tty = new HermesTty(home);
      try {
        tty.start();
        await tty.waitScreen('❯', 90_000);
        await fn(tty);
        await tty.waitScreen('❯', 30_000);
        tty.line('/exit');
        await waitFor('cli exited', () => (!tty.alive() ? true : undefined), 60_000);
      } catch (err) {
        console.error(`[record] ${s.name}: screen at failure:\n${tty.alive() ? tty.screen() : '(gone)'}`);
        throw err;
      } finally {
        tty.stop();
      }
    },
  };
  try {
    await s.drive(ctx);
    // late hooks (a background child, a finalize on exit) settle within a moment
    await new Promise((r) => setTimeout(r, 1500));
  } finally {
    await llm.close();
  }
  const lines = existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
  const out = lines.map((l) => scrub(l, root));
  const leaks = out.filter((l) => /\/tmp\/hermes-aep-e2e|\/root\b/.test(l)).length;
  writeFileSync(path.join(outDir, `${s.name}.jsonl`), out.map((l) => `${l}\n`).join(''));
  console.log(
    `[record] ${s.name}: ${lines.length} envelopes, ${Math.round((Date.now() - t0) / 1000)} s${leaks ? `, ${leaks} lines still name a machine path` : ''}`,
  );
}

async function main(): Promise<void> {
  const arg = (name: string) => {
    const i = process.argv.indexOf(`--${name}`);
    return i >= 0 ? process.argv[i + 1] : undefined;
  };
  const version = arg('version') as HermesVersion | undefined;
  const outDir = arg('out');
  if (!version || !E2E_HERMES_VERSIONS.includes(version) || !outDir) {
    throw new Error(`usage: record-hermes --version <${E2E_HERMES_VERSIONS.join('|')}> --out DIR [--only a,b]`);
  }
  const { stdout } = await run('bash', [path.join(ROOT, 'scripts', 'provision-hermes.sh')], { env: { ...process.env, HERMES_VERSION: version } });
  process.env[hermesBinEnv(version)] = /^HERMES=(.+)$/m.exec(stdout)![1]!;
  const only = arg('only')?.split(',');
  mkdirSync(outDir, { recursive: true });
  for (const s of SCENARIOS) {
    if (s.versions && !s.versions.includes(version)) continue;
    if (only && !only.includes(s.name)) continue;
    await record(version, s, outDir);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
