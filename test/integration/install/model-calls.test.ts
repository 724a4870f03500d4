// `install --no-model-calls` (issue 13): post_api_request (one hook call per model call) is registered by default on
// both transports; the flag leaves it out (shell: no config entry, no approval; plugin: `--no-model-calls` in
// hermes-aep.json's args, so the plugin does not subscribe). Re-running with or without the flag converges, switching
// takes out exactly the entry install added, a user's own post_api_request hooks are never touched, and uninstall
// still gives back every byte.
import { describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { addHooks, removeHooks, shimCommand } from '../../../src/install/hermes-config.js';
import { addApprovals, removeApprovals } from '../../../src/install/allowlist.js';
import { installedHooks, modelCallArgs } from '../../../src/install/model-calls.js';
import { MODEL_CALL_HOOK, REGISTERED_HOOKS } from '../../../src/hermes/envelope.js';
import { CLI } from '../../support/paths.js';
import { tempDir } from '../../support/processes.js';

const run = promisify(execFile);
const ENTRY = { command: shimCommand('/usr/bin/node', '/home/u/.aep/state/hermes-aep/shim/0.1.0/hook.cjs'), timeout: 10 };
const TWELVE = REGISTERED_HOOKS.filter((h) => h !== MODEL_CALL_HOOK);
/** the user's own post_api_request hook, before and after ours */
const USER = `# mine
model:
  default: x
hooks:
  post_api_request:
    - command: /usr/local/bin/cost-meter   # my own
      timeout: 5
  pre_tool_call:
    - command: /usr/local/bin/guard
`;

type Hooks = Record<string, { command: string; timeout?: number }[]>;
const ours = (hooks: Hooks, ev: string, command: string) => (hooks[ev] ?? []).filter((e) => e.command === command);

describe('which hooks install registers (pure)', () => {
  it('all thirteen by default; --no-model-calls: the twelve without post_api_request; only the plugin carries an argument for it', () => {
    expect(MODEL_CALL_HOOK).toBe('post_api_request');
    expect(REGISTERED_HOOKS).toHaveLength(13);
    expect(installedHooks({})).toEqual(REGISTERED_HOOKS);
    expect(installedHooks({ modelCalls: true })).toEqual(REGISTERED_HOOKS);
    expect(installedHooks({ modelCalls: false })).toEqual(TWELVE);
    expect(TWELVE).toHaveLength(12);
    expect(modelCallArgs({})).toEqual([]);
    expect(modelCallArgs({ modelCalls: false })).toEqual(['--no-model-calls']);
  });

  it('config.yaml: switching either way converges on what a direct install writes; the user’s own post_api_request entry is never touched', () => {
    for (const original of [USER, '', 'model:\n  default: x\n', 'hooks: {}\r\nother: 1\r\n', 'hooks:\n  post_api_request: [{command: /bin/mine}]\n']) {
      const all = addHooks(original, ENTRY);
      const some = addHooks(original, ENTRY, TWELVE);
      expect(ours(parse(all.text).hooks as Hooks, MODEL_CALL_HOOK, ENTRY.command)).toEqual([ENTRY]);
      const someHooks = parse(some.text).hooks as Hooks;
      expect(ours(someHooks, MODEL_CALL_HOOK, ENTRY.command)).toEqual([]);
      for (const ev of TWELVE) expect(ours(someHooks, ev, ENTRY.command), ev).toEqual([ENTRY]);
      // the user's own entries for post_api_request: exactly what they were
      expect((someHooks[MODEL_CALL_HOOK] ?? []).filter((e) => e.command !== ENTRY.command)).toEqual(
        ((parse(original)?.hooks?.[MODEL_CALL_HOOK] ?? []) as unknown[]).filter(Boolean),
      );
      // default → --no-model-calls removes the entry it added and nothing else; and back
      const off = addHooks(all.text, ENTRY, TWELVE);
      expect(off.changed).toBe(true);
      expect(off.text).toBe(some.text);
      expect(off.changes).toContain('hooks.post_api_request: remove 1 hermes-aep entry');
      expect(off.changes.filter((c) => c.includes('post_api_request'))).toHaveLength(1);
      expect(addHooks(some.text, ENTRY).text).toBe(all.text);
      // idempotent each way
      expect(addHooks(some.text, ENTRY, TWELVE)).toMatchObject({ changed: false, text: some.text });
      expect(addHooks(all.text, ENTRY)).toMatchObject({ changed: false, text: all.text });
      // uninstall gives back every byte, from either
      for (const t of [all.text, some.text, off.text]) expect(removeHooks(t).text).toBe(original);
    }
  });

  it('the allowlist: twelve approvals with --no-model-calls, switching replaces ours, uninstall gives back the bytes', () => {
    const start = '{"approvals": [{"event": "post_api_request", "command": "/usr/local/bin/cost-meter"}]}';
    const all = addApprovals(start, ENTRY.command, 'a', 'm', REGISTERED_HOOKS);
    const some = addApprovals(start, ENTRY.command, 'a', 'm', TWELVE);
    const events = (t: string) => (JSON.parse(t) as { approvals: { event: string; command: string }[] }).approvals.filter((a) => a.command === ENTRY.command);
    expect(events(all.text).map((a) => a.event)).toEqual([...REGISTERED_HOOKS]);
    expect(events(some.text).map((a) => a.event)).toEqual(TWELVE);
    const off = addApprovals(all.text, ENTRY.command, 'a', 'm', TWELVE);
    expect(off.changed).toBe(true);
    expect(off.text).toBe(some.text);
    expect(addApprovals(off.text, ENTRY.command, 'b', 'm', TWELVE).changed).toBe(false);
    expect(addApprovals(off.text, ENTRY.command, 'a', 'm', REGISTERED_HOOKS).text).toBe(all.text);
    for (const t of [all.text, some.text]) expect(removeApprovals(t).text).toBe(start);
  });
});

/** A clean environment: no AEP_* target or gate from the caller's shell. */
function setup(): { home: string; state: string; cli: (...args: string[]) => Promise<{ stdout: string; stderr: string }>; files: () => string[] } {
  const home = tempDir();
  const state = tempDir();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HERMES_HOME: home,
    AEP_STATE_DIR: state,
    AEP_HERMES_CONTROL: '',
    AEP_INSTRUCT: '',
    AEP_ATTENTION_TIMEOUT_MS: '',
  };
  for (const k of ['AEP_SOCKET', 'AEP_PORT', 'AEP_HOST', 'AEP_HOOK_URL']) delete env[k];
  writeFileSync(path.join(home, 'config.yaml'), USER);
  const read = (f: string) => (existsSync(path.join(home, f)) ? readFileSync(path.join(home, f), 'utf8') : '<none>');
  return {
    home,
    state,
    cli: (...args) => run(process.execPath, [CLI, ...args], { env }),
    files: () => [read('config.yaml'), read('shell-hooks-allowlist.json')],
  };
}

describe('hermes-aep install --no-model-calls (the real CLI)', () => {
  it('--help shows the flag', async () => {
    const { stdout } = await run(process.execPath, [CLI, 'install', '--help']);
    expect(stdout).toMatch(/--no-model-calls +leave out post_api_request/);
    expect(stdout).toMatch(/thirteen\s+events/);
  });

  it('shell: default → --no-model-calls → again → default → uninstall; each run converges, the user’s hook stays, the bytes come back', async () => {
    const t = setup();
    const approvals = () => (JSON.parse(t.files()[1]!) as { approvals: { event: string }[] }).approvals.map((a) => a.event);

    const on = await t.cli('install');
    expect(on.stdout).toContain('model calls: on (post_api_request: model-call spans, tokens and cost, for one more hook call, so one more shim start,');
    const [cfgOn, allowOn] = t.files();
    const hooksOn = parse(cfgOn!).hooks as Hooks;
    const cmd = hooksOn.pre_tool_call!.at(-1)!.command;
    expect(cmd).toMatch(/hook\.cjs --state-dir /);
    expect(hooksOn.post_api_request).toEqual([
      { command: '/usr/local/bin/cost-meter', timeout: 5 },
      { command: cmd, timeout: 10 },
    ]);
    expect(approvals()).toEqual([...REGISTERED_HOOKS]);

    const dry = await t.cli('install', '--no-model-calls', '--dry-run');
    expect(dry.stdout).toContain('model calls: off (--no-model-calls: no post_api_request hook; no model-call spans, tokens or cost)');
    expect(dry.stdout).toContain('hooks: remove 1 hermes-aep entry (post_api_request)');
    expect(dry.stdout).toContain('each of the 12 events under hooks:');
    expect(dry.stdout).toMatch(/hooks: refresh \(12 events: (?!.*post_api_request)/);
    expect(t.files()).toEqual([cfgOn, allowOn]);

    const off = await t.cli('install', '--no-model-calls');
    expect(off.stdout).toContain('hooks: remove 1 hermes-aep entry (post_api_request)');
    const [cfgOff] = t.files();
    const hooksOff = parse(cfgOff!).hooks as Hooks;
    expect(hooksOff.post_api_request).toEqual([{ command: '/usr/local/bin/cost-meter', timeout: 5 }]);
    for (const ev of TWELVE) expect(ours(hooksOff, ev, cmd), ev).toEqual([{ command: cmd, timeout: 10 }]);
    expect(approvals()).toEqual(TWELVE);
    // the user's own lines for the event, byte for byte
    expect(cfgOff).toContain('  post_api_request:\n    - command: /usr/local/bin/cost-meter   # my own\n      timeout: 5\n');
    const again = await t.cli('install', '--no-model-calls');
    expect(again.stdout).toContain('nothing to change');
    expect(t.files()[0]).toBe(cfgOff);

    await t.cli('install');
    expect(t.files()[0]).toBe(cfgOn);
    expect(approvals()).toEqual([...REGISTERED_HOOKS]);
    await t.cli('install', '--no-model-calls');
    await t.cli('uninstall');
    expect(t.files()).toEqual([USER, '<none>']);
  });

  it('plugin: --no-model-calls goes into hermes-aep.json’s args (after the gates), a run without it takes it out; the report says which', async () => {
    const t = setup();
    const conf = () => JSON.parse(readFileSync(path.join(t.home, 'plugins', 'hermes-aep', 'hermes-aep.json'), 'utf8')) as { args: string[] };
    const off = await t.cli('install', '--transport', 'plugin', '--instruct', '--no-model-calls');
    expect(off.stdout).toContain('model calls: off (--no-model-calls: the plugin does not subscribe to post_api_request; no model-call spans, tokens or cost)');
    expect(conf().args).toEqual(['--state-dir', t.state, '--instruct', '--no-model-calls']);
    expect((await t.cli('install', '--transport', 'plugin', '--instruct', '--no-model-calls')).stdout).toContain('already in place');
    const dry = await t.cli('install', '--transport', 'plugin', '--instruct', '--dry-run');
    expect(dry.stdout).toContain('model calls: on (post_api_request: model-call spans, tokens and cost, for one more hook call per model call');
    expect(dry.stdout).toContain('plugin: replace');
    expect(conf().args).toContain('--no-model-calls');
    await t.cli('install', '--transport', 'plugin', '--instruct');
    expect(conf().args).toEqual(['--state-dir', t.state, '--instruct']);
    // shell from the plugin, with the flag: no post_api_request entry of ours
    await t.cli('install', '--no-model-calls');
    expect(existsSync(path.join(t.home, 'plugins'))).toBe(false);
    expect((parse(t.files()[0]!).hooks as Hooks).post_api_request).toEqual([{ command: '/usr/local/bin/cost-meter', timeout: 5 }]);
    await t.cli('uninstall');
    expect(t.files()).toEqual([USER, '<none>']);
  });
});
