// The real CLI on temp HERMES_HOMEs and state dirs: a missing or empty Hermes
// home (item 9), a reader that goes away (`install | head`), and the shim copy
// Hermes runs from the state dir, with its target written into the command
// (item 10).
import { describe, expect, it } from 'vitest';
import { requirePython } from '../../support/python.js';
import { execFile, execFileSync, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { shimCommand } from '../../../src/install/hermes-config.js';
import { shlexSplit } from '../../../src/install/shell-words.js';
import { REGISTERED_HOOKS } from '../../../src/hermes/envelope.js';
import { CLI, readJson, SHIM } from '../../support/paths.js';
import { tempDir } from '../../support/processes.js';
import { pathWithOnlyThisNode } from '../../support/node-path.js';

const run = promisify(execFile);
const VERSION = readJson<{ version: string }>('package.json').version;

/** A clean environment: no AEP_* target from the caller's shell. */
function envFor(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: pathWithOnlyThisNode(), ...extra };
  for (const k of ['AEP_SOCKET', 'AEP_PORT', 'AEP_HOST', 'AEP_HOOK_URL', 'AEP_STATE_DIR', 'AEP_HERMES_CONTROL', 'AEP_INSTRUCT', 'AEP_ATTENTION_TIMEOUT_MS'])
    if (!(k in extra)) delete env[k];
  return env;
}

function fresh(): { home: string; state: string; env: NodeJS.ProcessEnv; copy: string; command: string } {
  const home = tempDir();
  const state = tempDir();
  const copy = path.join(state, 'shim', VERSION, 'hook.cjs');
  return { home, state, env: envFor({ HERMES_HOME: home, AEP_STATE_DIR: state }), copy, command: shimCommand(process.execPath, copy, ['--state-dir', state]) };
}

const hooksOf = (file: string) => parse(readFileSync(file, 'utf8'))?.hooks as Record<string, { command: string; timeout: number }[]>;

describe('a fresh Hermes home (item 9)', () => {
  it('a missing HERMES_HOME is created (0700) with config.yaml and the allowlist, and the report says so', async () => {
    const home = path.join(tempDir(), 'not-yet');
    const env = envFor({ HERMES_HOME: home, AEP_STATE_DIR: tempDir() });
    const r = await run(process.execPath, [CLI, 'install'], { env });
    expect(r.stdout).toContain(`HERMES_HOME=${home} (does not exist: created, 0700)`);
    expect(statSync(home).mode & 0o777).toBe(0o700);
    expect(Object.keys(hooksOf(path.join(home, 'config.yaml'))).sort()).toEqual([...REGISTERED_HOOKS].sort());
    expect(existsSync(path.join(home, 'shell-hooks-allowlist.json'))).toBe(true);
    await run(process.execPath, [CLI, 'uninstall'], { env });
    expect(existsSync(path.join(home, 'config.yaml'))).toBe(false);
    expect(existsSync(path.join(home, 'shell-hooks-allowlist.json'))).toBe(false);
  });

  it('uninstall with no HERMES_HOME says what is missing and changes nothing', async () => {
    const home = path.join(tempDir(), 'never-made');
    const r = await run(process.execPath, [CLI, 'uninstall'], { env: envFor({ HERMES_HOME: home }) });
    expect(r.stdout).toContain(`HERMES_HOME=${home} does not exist: nothing to change`);
    expect(existsSync(home)).toBe(false);
  });

  it('an empty config.yaml gets the hooks; uninstall gives its bytes back (blank and comment-only files: test/faults)', async () => {
    const { home, env } = fresh();
    const file = path.join(home, 'config.yaml');
    writeFileSync(file, '');
    await run(process.execPath, [CLI, 'install'], { env });
    expect(Object.keys(hooksOf(file)).sort()).toEqual([...REGISTERED_HOOKS].sort());
    await run(process.execPath, [CLI, 'uninstall'], { env });
    expect(readFileSync(file, 'utf8')).toBe('');
  });

  it('`install | head` (the reader goes away) still finishes every write and exits 0, without a stack trace', async () => {
    for (const args of [['install'], ['--help']]) {
      const { home, env } = fresh();
      const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      child.stdout.destroy(); // the read end closes before the CLI writes a byte
      let stderr = '';
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
      const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
      expect({ args, code, stderr }).toEqual({ args, code: 0, stderr: '' });
      if (args[0] === 'install' && args.length === 1) {
        expect(Object.keys(hooksOf(path.join(home, 'config.yaml')))).toHaveLength(REGISTERED_HOOKS.length);
        expect(existsSync(path.join(home, 'shell-hooks-allowlist.json'))).toBe(true);
      }
    }
  });
});

describe('the registered shim lives under the state dir (item 10)', () => {
  it('install copies the built shim to {state}/shim/{version}/hook.cjs (0700, read-only, same bytes) and registers that copy', async () => {
    const { home, state, env, copy, command } = fresh();
    const r = await run(process.execPath, [CLI, 'install'], { env });
    expect(r.stdout).toContain(copy);
    expect(readFileSync(copy)).toEqual(readFileSync(SHIM));
    expect(statSync(path.join(state, 'shim')).mode & 0o777).toBe(0o700);
    expect(statSync(path.dirname(copy)).mode & 0o777).toBe(0o700);
    expect(statSync(copy).mode & 0o222).toBe(0); // read-only
    for (const event of REGISTERED_HOOKS) expect(hooksOf(path.join(home, 'config.yaml'))[event]).toEqual([{ command, timeout: 10 }]);
    expect(command).not.toContain(`${path.sep}dist${path.sep}`);
    const allow = JSON.parse(readFileSync(path.join(home, 'shell-hooks-allowlist.json'), 'utf8')) as { approvals: { event: string; command: string }[] };
    expect(allow.approvals.map((a) => a.command)).toEqual(REGISTERED_HOOKS.map(() => command));

    // run it the way Hermes does: shlex-split, no shell; nothing listens, so the shim answers {} and exits 0
    const [exe, ...argv] = shlexSplit(command)!;
    const out = execFileSync(exe!, argv, {
      input: '{"hook_event_name":"on_session_start"}',
      env: envFor({ AEP_HOOK_URL: 'http://127.0.0.1:9/hook', AEP_SHIM_TIMEOUT_MS: '3000' }),
    });
    expect(out.toString()).toBe('{}');
  });

  it('a second install of the same version changes nothing: the copy, its mtime, config.yaml and the allowlist stay', async () => {
    const { home, env, copy } = fresh();
    await run(process.execPath, [CLI, 'install'], { env });
    const before = {
      mtime: statSync(copy, { bigint: true }).mtimeNs,
      cfg: readFileSync(path.join(home, 'config.yaml')),
      allow: readFileSync(path.join(home, 'shell-hooks-allowlist.json')),
    };
    const r = await run(process.execPath, [CLI, 'install'], { env });
    expect(r.stdout).toContain('already in place');
    expect(r.stdout).toContain('nothing to change');
    expect(statSync(copy, { bigint: true }).mtimeNs).toBe(before.mtime);
    expect(readFileSync(path.join(home, 'config.yaml'))).toEqual(before.cfg);
    expect(readFileSync(path.join(home, 'shell-hooks-allowlist.json'))).toEqual(before.allow);
  });

  it("the allowlist records the copy's mtime exactly as Hermes computes it, so `hooks doctor` sees no drift", async () => {
    requirePython();
    const { home, env } = fresh();
    await run(process.execPath, [CLI, 'install'], { env });
    const allow = JSON.parse(readFileSync(path.join(home, 'shell-hooks-allowlist.json'), 'utf8')) as {
      approvals: { command: string; script_mtime_at_approval: string }[];
    };
    // Hermes: the first argv token with a script extension, os.path.getmtime, fromtimestamp(utc).isoformat()
    const py = [
      'import sys, shlex, os, datetime',
      'parts = shlex.split(sys.argv[1])',
      "p = next(x for x in parts if x.lower().endswith(('.sh', '.py', '.js', '.mjs', '.cjs')))",
      "print(datetime.datetime.fromtimestamp(os.path.getmtime(p), tz=datetime.timezone.utc).isoformat().replace('+00:00', 'Z'))",
    ].join('\n');
    for (const a of allow.approvals) {
      expect(a.script_mtime_at_approval).toBe(execFileSync('python3', ['-c', py, a.command]).toString().trim());
    }
  });

  it('a non-default socket, URL or port is written into the command; the default state dir is not', async () => {
    const fakeHome = tempDir();
    const defaultState = path.join(fakeHome, '.aep', 'state', 'hermes-aep');
    // (the precedence between options and variables in full: parts.test.ts)
    const cases: { args: string[]; env: Record<string, string>; tail: string[] }[] = [
      { args: [], env: {}, tail: [] },
      { args: ['--socket', '/tmp/my sockets/h.sock'], env: {}, tail: ['--socket', '/tmp/my sockets/h.sock'] },
      { args: [], env: { AEP_PORT: '9311' }, tail: ['--url', 'http://127.0.0.1:9311/hook'] },
    ];
    for (const c of cases) {
      const home = tempDir();
      await run(process.execPath, [CLI, 'install', ...c.args], { env: envFor({ HOME: fakeHome, HERMES_HOME: home, ...c.env }) });
      const state = c.args[0] === '--state-dir' ? c.args[1]! : defaultState;
      const expected = shimCommand(process.execPath, path.join(state, 'shim', VERSION, 'hook.cjs'), c.tail);
      expect(hooksOf(path.join(home, 'config.yaml')).pre_tool_call).toEqual([{ command: expected, timeout: 10 }]);
    }
  });

  it('refuses a target it cannot record: two targets, a non-loopback URL, AEP_SOCKET=off alone', async () => {
    const { env } = fresh();
    await expect(run(process.execPath, [CLI, 'install', '--socket', '/a.sock', '--url', 'http://127.0.0.1:1/hook'], { env })).rejects.toThrow(/not both/);
    await expect(run(process.execPath, [CLI, 'install', '--url', 'http://192.0.2.1:8393/hook'], { env })).rejects.toThrow(/this machine/);
    await expect(run(process.execPath, [CLI, 'install'], { env: { ...env, AEP_SOCKET: 'off' } })).rejects.toThrow(/AEP_SOCKET=off/);
  });

  it('creates {state}/hook-token once: 64 hex characters, 0600, never printed, never overwritten', async () => {
    const { state, env } = fresh();
    const r = await run(process.execPath, [CLI, 'install'], { env });
    const file = path.join(state, 'hook-token');
    const token = readFileSync(file, 'utf8');
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(r.stdout + r.stderr).not.toContain(token);
    await run(process.execPath, [CLI, 'install', '--timeout', '30'], { env });
    expect(readFileSync(file, 'utf8')).toBe(token);

    const other = fresh();
    mkdirSync(other.state, { recursive: true });
    writeFileSync(path.join(other.state, 'hook-token'), 'the daemon made this one', { mode: 0o600 });
    await run(process.execPath, [CLI, 'install'], { env: other.env });
    expect(readFileSync(path.join(other.state, 'hook-token'), 'utf8')).toBe('the daemon made this one');
  });

  it('uninstall takes the entries out, leaves the copy in place and says where it is', async () => {
    const { env, copy } = fresh();
    await run(process.execPath, [CLI, 'install'], { env });
    const r = await run(process.execPath, [CLI, 'uninstall'], { env });
    expect(r.stdout).toContain(`left in place: ${path.dirname(copy)}`);
    expect(existsSync(copy)).toBe(true);
  });
});
