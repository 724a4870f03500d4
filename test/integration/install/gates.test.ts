// The opt-in gates at install time (issue 12): `--control` / `--instruct` (or AEP_HERMES_CONTROL / AEP_INSTRUCT in the
// install's environment) are written into the registered command, and the pre_tool_call entry gets a `timeout:` above
// the shim's hold deadline; a combination where Hermes would kill the shim before the daemon answers is refused with
// config.yaml untouched; uninstall still gives every byte back.
import { describe, expect, it } from 'vitest';
import { execFile, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { hookTimeouts, neededTimeout, resolveGates } from '../../../src/install/gates.js';
import { addHooks, isOurCommand, removeHooks, shimCommand } from '../../../src/install/hermes-config.js';
import { shlexSplit } from '../../../src/install/shell-words.js';
import { REGISTERED_HOOKS } from '../../../src/hermes/envelope.js';
import { CLI, readJson } from '../../support/paths.js';
import { tempDir } from '../../support/processes.js';
import { pathWithOnlyThisNode } from '../../support/node-path.js';

const run = promisify(execFile);
const VERSION = readJson<{ version: string }>('package.json').version;
const NO_GATES = { AEP_HERMES_CONTROL: '', AEP_INSTRUCT: '', AEP_ATTENTION_TIMEOUT_MS: '' };

describe('the gates install records (pure)', () => {
  it('off unless asked: no arguments, and the timeouts of before (10 s everywhere, or --timeout)', () => {
    const g = resolveGates({}, {});
    expect(g).toMatchObject({ control: false, instruct: false, args: [], summary: 'off (observe only)' });
    expect(hookTimeouts(g, undefined)).toEqual({ timeout: 10, timeouts: {} });
    expect(hookTimeouts(g, 7)).toEqual({ timeout: 7, timeouts: {} });
    expect(resolveGates({}, { AEP_HERMES_CONTROL: 'off', AEP_INSTRUCT: '0' }).args).toEqual([]);
  });

  it('--control / AEP_HERMES_CONTROL: `--control --attention-timeout-ms <window>`; pre_tool_call gets ceil(window + 3 s) + 2 s', () => {
    for (const g of [resolveGates({ control: true }, {}), resolveGates({}, { AEP_HERMES_CONTROL: 'On' })]) {
      expect(g.args).toEqual(['--control', '--attention-timeout-ms', '55000']);
      expect(g.holdMs).toBe(58_000);
      expect(neededTimeout(g)).toBe(60);
      expect(hookTimeouts(g, undefined)).toEqual({ timeout: 10, timeouts: { pre_tool_call: 60 } });
    }
    const g = resolveGates({ control: true }, { AEP_ATTENTION_TIMEOUT_MS: '100500' });
    expect(g.args).toEqual(['--control', '--attention-timeout-ms', '100500']);
    expect(neededTimeout(g)).toBe(106); // ceil(103.5) + 2
    // an explicit --timeout applies to every hook, the held one included, once it is enough
    expect(hookTimeouts(g, 106)).toEqual({ timeout: 106, timeouts: {} });
    expect(hookTimeouts(g, 200)).toEqual({ timeout: 200, timeouts: {} });
    // a short window needs less than the default: pre_tool_call never gets less than the others
    expect(hookTimeouts(resolveGates({ control: true }, { AEP_ATTENTION_TIMEOUT_MS: '1000' }), undefined)).toEqual({ timeout: 10, timeouts: {} });
    expect(hookTimeouts(resolveGates({ control: true }, { AEP_ATTENTION_TIMEOUT_MS: '1000' }), 6)).toEqual({ timeout: 6, timeouts: {} });
    // the flag wins over the environment
    expect(resolveGates({ control: true }, { AEP_HERMES_CONTROL: '0' }).control).toBe(true);
  });

  it('--instruct / AEP_INSTRUCT: `--instruct`; pre_llm_call keeps the others’ timeout (the shim answers it within its 5 s)', () => {
    const g = resolveGates({ instruct: true }, {});
    expect(g.args).toEqual(['--instruct']);
    expect(hookTimeouts(g, undefined)).toEqual({ timeout: 10, timeouts: {} });
    expect(resolveGates({}, { AEP_INSTRUCT: 'YES', AEP_HERMES_CONTROL: 'true' }).args).toEqual(['--control', '--attention-timeout-ms', '55000', '--instruct']);
  });

  it('refused: a window whose timeout passes Hermes’s 300 s clamp, a --timeout below what the hold needs, a value that is no switch', () => {
    expect(hookTimeouts(resolveGates({ control: true }, { AEP_ATTENTION_TIMEOUT_MS: '295000' }), undefined).timeouts).toEqual({ pre_tool_call: 300 });
    expect(() => hookTimeouts(resolveGates({ control: true }, { AEP_ATTENTION_TIMEOUT_MS: '295001' }), undefined)).toThrow(
      /needs a pre_tool_call timeout of 301 s, above the 300 s .*at most 295000/,
    );
    expect(() => hookTimeouts(resolveGates({ control: true }, {}), 59)).toThrow(/--timeout 59 is below the 60 s a held pre_tool_call needs/);
    // the same window without the control gate holds nothing: nothing to refuse
    expect(hookTimeouts(resolveGates({}, { AEP_ATTENTION_TIMEOUT_MS: '900000' }), 6)).toEqual({ timeout: 6, timeouts: {} });
    expect(() => resolveGates({}, { AEP_HERMES_CONTROL: 'maybe' })).toThrow(/AEP_HERMES_CONTROL: 1, true, yes, on/);
    expect(() => resolveGates({}, { AEP_INSTRUCT: 'enabled' })).toThrow(/AEP_INSTRUCT: /);
    expect(() => resolveGates({ control: true }, { AEP_ATTENTION_TIMEOUT_MS: '55s' })).toThrow(/AEP_ATTENTION_TIMEOUT_MS: a whole number of 1 or more/);
  });

  it('the gated command is recognised as ours (so uninstall and a later install take it out); other arguments are not', () => {
    const base = '/usr/bin/node /home/u/.aep/state/hermes-aep/shim/0.1.0/hook.cjs';
    for (const rest of [
      '--control --attention-timeout-ms 55000',
      '--instruct',
      '--state-dir /s --control --attention-timeout-ms 9 --instruct',
      '--instruct --socket /s.sock',
    ])
      expect(isOurCommand(`${base} ${rest}`), rest).toBe(true);
    for (const rest of ['--control x', '--attention-timeout-ms', '--instruct --evil', '--control=1']) expect(isOurCommand(`${base} ${rest}`), rest).toBe(false);
  });
});

describe('config.yaml with a gated entry (pure edits): only pre_tool_call’s timeout differs, and every byte comes back', () => {
  const plain = { command: shimCommand('/usr/bin/node', '/s/shim/0.1.0/hook.cjs'), timeout: 10 };
  const gated = {
    command: shimCommand('/usr/bin/node', '/s/shim/0.1.0/hook.cjs', ['--control', '--attention-timeout-ms', '55000', '--instruct']),
    timeout: 10,
    timeouts: { pre_tool_call: 60 },
  };
  const CONFIGS = [
    '',
    'model:\n  default: x\n',
    'hooks:\n  pre_tool_call:\n    - command: /usr/local/bin/guard\n      matcher: terminal\n  post_tool_call: [{command: /bin/true}]\n  pre_llm_call:\n',
    'hooks:\n  pre_tool_call: [{command: /bin/guard}]\n  on_session_end: ~\n',
    'hooks: {}\r\nother: 1\r\n',
  ];

  it.each(CONFIGS)('%j', (original) => {
    const once = addHooks(original, gated);
    const cfg = parse(once.text) as { hooks: Record<string, { command: string; timeout?: number }[]> };
    for (const ev of REGISTERED_HOOKS) {
      const ours = cfg.hooks[ev]!.filter((e) => e.command === gated.command);
      expect(ours, ev).toEqual([{ command: gated.command, timeout: ev === 'pre_tool_call' ? 60 : 10 }]);
    }
    expect(removeHooks(once.text).text).toBe(original);
    expect(addHooks(once.text, gated).changed).toBe(false);
    // turning the gates off (or on) replaces our entries, and still gives the original back
    const off = addHooks(once.text, plain);
    expect(off.changed).toBe(true);
    expect(JSON.stringify(parse(off.text))).not.toContain('--control');
    expect(removeHooks(off.text).text).toBe(original);
    expect(addHooks(off.text, gated).text).toBe(once.text);
    // only a timeout changed: that is a change too
    expect(addHooks(once.text, { ...gated, timeouts: { pre_tool_call: 90 } }).changed).toBe(true);
  });
});

/** A clean environment: no AEP_* target or gate from the caller's shell. */
function envFor(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: pathWithOnlyThisNode(), ...NO_GATES, ...extra };
  for (const k of ['AEP_SOCKET', 'AEP_PORT', 'AEP_HOST', 'AEP_HOOK_URL', 'AEP_STATE_DIR']) if (!(k in extra)) delete env[k];
  return env;
}

const USER = '# mine\nmodel:\n  default: x\nhooks:\n  pre_tool_call:\n    - command: /usr/local/bin/guard\n';
const hooksIn = (home: string) =>
  (parse(readFileSync(path.join(home, 'config.yaml'), 'utf8')) as { hooks: Record<string, { command: string; timeout: number }[]> }).hooks;

describe('hermes-aep install --control / --instruct (the real CLI)', () => {
  it('writes the gates into the command and pre_tool_call’s timeout; a second run changes nothing; uninstall gives both files back', async () => {
    const home = tempDir();
    const state = tempDir();
    writeFileSync(path.join(home, 'config.yaml'), USER);
    const env = envFor({ HERMES_HOME: home, AEP_STATE_DIR: state });
    const r = await run(process.execPath, [CLI, 'install', '--control', '--instruct'], { env });
    const command = shimCommand(process.execPath, path.join(state, 'shim', VERSION, 'hook.cjs'), [
      '--state-dir',
      state,
      '--control',
      '--attention-timeout-ms',
      '55000',
      '--instruct',
    ]);
    expect(r.stdout).toContain('gates: control (a pre_tool_call waits up to 58000 ms');
    expect(r.stdout).toContain('AEP_HERMES_CONTROL=1 and AEP_INSTRUCT=1 in its own environment');
    expect(r.stdout).toContain('timeout: 10 (pre_tool_call: 60)');
    const hooks = hooksIn(home);
    for (const ev of REGISTERED_HOOKS)
      expect(
        hooks[ev]!.filter((e) => e.command === command),
        ev,
      ).toEqual([{ command, timeout: ev === 'pre_tool_call' ? 60 : 10 }]);
    const allow = JSON.parse(readFileSync(path.join(home, 'shell-hooks-allowlist.json'), 'utf8')) as { approvals: { command: string }[] };
    expect(allow.approvals.map((a) => a.command)).toEqual(REGISTERED_HOOKS.map(() => command));
    const installed = readFileSync(path.join(home, 'config.yaml'));
    expect((await run(process.execPath, [CLI, 'install', '--control', '--instruct'], { env })).stdout).toContain('nothing to change');
    // the same from the install's environment
    expect((await run(process.execPath, [CLI, 'install'], { env: { ...env, AEP_HERMES_CONTROL: '1', AEP_INSTRUCT: 'true' } })).stdout).toContain(
      'nothing to change',
    );
    expect(readFileSync(path.join(home, 'config.yaml'))).toEqual(installed);
    await run(process.execPath, [CLI, 'uninstall'], { env });
    expect(readFileSync(path.join(home, 'config.yaml'), 'utf8')).toBe(USER);
    expect(existsSync(path.join(home, 'shell-hooks-allowlist.json'))).toBe(false);
  });

  it('AEP_ATTENTION_TIMEOUT_MS and --timeout: the window is recorded, an explicit timeout that is enough applies to every hook', async () => {
    const home = tempDir();
    const env = envFor({ HERMES_HOME: home, AEP_STATE_DIR: tempDir(), AEP_ATTENTION_TIMEOUT_MS: '100000' });
    await run(process.execPath, [CLI, 'install', '--control'], { env });
    let hooks = hooksIn(home);
    expect(hooks.pre_tool_call![0]!.command).toMatch(/ --control --attention-timeout-ms 100000$/);
    expect(hooks.pre_tool_call![0]!.timeout).toBe(105);
    expect(hooks.on_session_end![0]!.timeout).toBe(10);
    await run(process.execPath, [CLI, 'install', '--control', '--timeout', '120'], { env });
    hooks = hooksIn(home);
    for (const ev of REGISTERED_HOOKS) expect(hooks[ev]![0]!.timeout, ev).toBe(120);
  });

  it.each([
    [['--control', '--timeout', '30'], {}, /--timeout 30 is below the 60 s a held pre_tool_call needs/],
    [['--control'], { AEP_ATTENTION_TIMEOUT_MS: '296000' }, /above the 300 s Hermes clamps it to/],
    [['--timeout', '59'], { AEP_HERMES_CONTROL: 'yes' }, /--timeout 59 is below the 60 s/],
    [[], { AEP_INSTRUCT: 'maybe' }, /AEP_INSTRUCT: 1, true, yes, on/],
    [['--transport', 'plugin'], { AEP_HERMES_CONTROL: 'sure' }, /AEP_HERMES_CONTROL: /],
  ] as const)('refused %j %j: exit 1, the reason on stderr, nothing written (dry run or not)', async (args, extra, reason) => {
    const home = tempDir();
    const state = tempDir();
    writeFileSync(path.join(home, 'config.yaml'), USER);
    const env = envFor({ HERMES_HOME: home, AEP_STATE_DIR: state, ...extra });
    for (const dry of [['--dry-run'], []]) {
      const err = (await run(process.execPath, [CLI, 'install', ...dry, ...args], { env }).then(
        () => undefined,
        (e: unknown) => e,
      )) as { code: number; stderr: string; stdout: string } | undefined;
      expect(err?.code).toBe(1);
      expect(err!.stderr).toMatch(reason);
      expect(err!.stdout).toBe('');
    }
    expect(readFileSync(path.join(home, 'config.yaml'), 'utf8')).toBe(USER);
    expect(readdirSync(home)).toEqual(['config.yaml']);
    expect(readdirSync(state)).toEqual([]);
  });

  it('the gate reaches the shim through the command alone: run as Hermes runs it, with no AEP_* variable, pre_tool_call is held', async () => {
    const home = tempDir();
    const state = tempDir();
    await run(process.execPath, [CLI, 'install', '--control'], { env: envFor({ HERMES_HOME: home, AEP_STATE_DIR: state }) });
    const heads: string[][] = [];
    const peer = createServer((sock: Socket) => {
      let buf = Buffer.alloc(0);
      sock.on('error', () => undefined);
      sock.on('data', (c: Buffer) => {
        buf = Buffer.concat([buf, c]);
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const lines = buf.toString('latin1', 0, end).split('\r\n');
        if (buf.length < end + 4 + Number(/^content-length: (\d+)$/im.exec(lines.join('\n'))?.[1] ?? 0)) return;
        heads.push(lines);
        const body = lines.some((l) => /^x-hermes-aep-hold-ms:/i.test(l)) ? '{"action":"block","message":"held, then denied"}' : '{}';
        sock.end(`HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
      });
    });
    await new Promise<void>((r) => peer.listen(path.join(state, 'hook.sock'), r));
    try {
      const hooks = hooksIn(home);
      const hermesRuns = (event: string) => {
        const [exe, ...argv] = shlexSplit(hooks[event]![0]!.command)!;
        const env: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? '', HOME: tempDir() };
        return new Promise<string>((resolve, reject) => {
          const child = spawn(exe!, argv, { env, stdio: ['pipe', 'pipe', 'inherit'] });
          let out = '';
          child.stdout.on('data', (c: Buffer) => (out += c.toString()));
          child.on('error', reject);
          child.on('close', () => resolve(out));
          child.stdin.end(JSON.stringify({ hook_event_name: event, tool_name: 'terminal', tool_input: {}, session_id: 's', cwd: '/', extra: {} }));
        });
      };
      expect(await hermesRuns('pre_tool_call')).toBe('{"action":"block","message":"held, then denied"}');
      expect(heads.pop()!.filter((l) => /^x-hermes-aep-hold-ms:/i.test(l))).toEqual(['x-hermes-aep-hold-ms: 58000']);
      expect(await hermesRuns('post_tool_call')).toBe('{}');
      expect(heads.pop()!.filter((l) => /^x-hermes-aep-hold-ms:/i.test(l))).toEqual([]);
    } finally {
      await new Promise((r) => peer.close(r));
    }
  });

  it('--transport plugin: the gates go into hermes-aep.json’s args, where the plugin reads them', async () => {
    const home = tempDir();
    const state = tempDir();
    const env = envFor({ HERMES_HOME: home, AEP_STATE_DIR: state });
    const r = await run(process.execPath, [CLI, 'install', '--transport', 'plugin', '--control', '--instruct'], { env });
    expect(r.stdout).toContain('gates: control');
    const conf = JSON.parse(readFileSync(path.join(home, 'plugins', 'hermes-aep', 'hermes-aep.json'), 'utf8')) as { args: string[] };
    expect(conf.args).toEqual(['--state-dir', state, '--control', '--attention-timeout-ms', '55000', '--instruct']);
    await run(process.execPath, [CLI, 'install', '--transport', 'plugin'], { env });
    expect((JSON.parse(readFileSync(path.join(home, 'plugins', 'hermes-aep', 'hermes-aep.json'), 'utf8')) as { args: string[] }).args).toEqual([
      '--state-dir',
      state,
    ]);
    await run(process.execPath, [CLI, 'uninstall'], { env });
    expect(existsSync(path.join(home, 'plugins'))).toBe(false);
  });
});
