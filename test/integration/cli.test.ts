// The bin's argument handling (item 11): help and version exit 0, an unknown
// command says so, every command has --help and every option is in it,
// `daemon --help` never starts a daemon, and `hook` stays off the parser.
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { CLI, readJson, ROOT } from '../support/paths.js';
import { tempDir } from '../support/processes.js';

interface Result {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** true when the CLI had to be killed at the deadline */
  readonly killed: boolean;
}

/** Run the compiled CLI; a process still running at the deadline is killed (its own pid only) and reported. */
function cli(args: string[], opts: { env?: NodeJS.ProcessEnv; input?: string; deadlineMs?: number } = {}): Promise<Result> {
  return new Promise((resolve) => {
    const state = tempDir();
    const child = spawn(process.execPath, [CLI, ...args], {
      env: { ...process.env, AEP_STATE_DIR: state, AEP_LOG_DIR: path.join(state, 'log'), AEP_PORT: '0', OTEL_TRACES_EXPORTER: 'none', ...opts.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let killed = false;
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    child.stdin.end(opts.input ?? '');
    const timer = setTimeout(() => {
      killed = true;
      child.kill('SIGKILL');
    }, opts.deadlineMs ?? 10_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, killed });
    });
  });
}

const VERSION = readJson<{ version: string }>('package.json').version;

describe('hermes-aep argument handling', () => {
  it.each([['-h'], ['--help'], ['help']])('%s prints the usage with every command and exits 0', async (flag) => {
    const r = await cli([flag]);
    expect(r.code).toBe(0);
    for (const c of ['daemon', 'hook', 'install', 'uninstall']) expect(r.stdout).toContain(c);
    expect(r.stdout).toContain('--version');
  });

  it.each([['--version'], ['-V']])('%s prints the package version and exits 0', async (flag) => {
    const r = await cli([flag]);
    expect([r.code, r.stdout.trim()]).toEqual([0, VERSION]);
  });

  it('an unknown command says so and fails', async () => {
    const r = await cli(['frobnicate']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/unknown command 'frobnicate'/);
  });

  it('an unknown option says so and fails, without touching anything', async () => {
    const r = await cli(['install', '--frob'], { env: { HERMES_HOME: path.join(tempDir(), 'untouched') } });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/unknown option '--frob'/);
  });

  it('install --help lists every option and exits 0 without installing', async () => {
    const home = path.join(tempDir(), 'untouched');
    const r = await cli(['install', '--help'], { env: { HERMES_HOME: home } });
    expect(r.code).toBe(0);
    for (const o of [
      '--dry-run',
      '--timeout',
      '--socket',
      '--url',
      '--state-dir',
      '--hermes-home',
      '--control',
      '--instruct',
      '--help',
      'HERMES_HOME',
      'AEP_PORT',
      'AEP_HERMES_CONTROL',
      'AEP_INSTRUCT',
      'AEP_ATTENTION_TIMEOUT_MS',
    ])
      expect(r.stdout).toContain(o);
    expect(r.stdout).not.toMatch(/HERMES_HOME=/);
  });

  it('uninstall --help lists its options and exits 0', async () => {
    const r = await cli(['uninstall', '--help']);
    expect(r.code).toBe(0);
    for (const o of ['--dry-run', '--hermes-home', '--help']) expect(r.stdout).toContain(o);
  });

  it('daemon --help prints help with the settings and exits 0; it does NOT start the daemon', async () => {
    const r = await cli(['daemon', '--help'], { deadlineMs: 8_000 });
    expect(r.killed).toBe(false);
    expect(r.code).toBe(0);
    for (const s of ['AEP_STATE_DIR', 'AEP_PORT', 'AEP_LOG_DIR', 'AEP_CAPTURE', 'OTEL_', 'Settings']) expect(r.stdout).toContain(s);
    expect(r.stderr).not.toMatch(/listening/);
  });

  it('daemon with a stray argument refuses instead of starting', async () => {
    const r = await cli(['daemon', 'now'], { deadlineMs: 8_000 });
    expect(r.killed).toBe(false);
    expect(r.code).not.toBe(0);
  });

  it('hook --help lists the shim options; plain `hook` stays the shim (prints {} and exits 0)', async () => {
    const help = await cli(['hook', '--help']);
    expect(help.code).toBe(0);
    for (const o of [
      '--socket',
      '--url',
      '--state-dir',
      '--control',
      '--instruct',
      '--attention-timeout-ms',
      'AEP_HERMES_CONTROL',
      'AEP_INSTRUCT',
      'x-hermes-aep-hold-ms',
    ])
      expect(help.stdout).toContain(o);
    const hook = await cli(['hook'], { input: '{"hook_event_name":"x"}', env: { AEP_HOOK_URL: 'http://127.0.0.1:9/hook', AEP_SHIM_TIMEOUT_MS: '2000' } });
    expect([hook.code, hook.stdout]).toEqual([0, '{}']);
  });

  it('`hook` never loads the argument parser', async () => {
    const rec = path.join(tempDir(), 'imports.txt');
    const hook = path.join(ROOT, 'test', 'support', 'record-imports.mjs');
    const r = await cli(['hook'], { input: '{}', env: { AEP_HOOK_URL: 'http://127.0.0.1:9/hook', RECORD_IMPORTS: rec, NODE_OPTIONS: `--import=${hook}` } });
    expect(r.stdout).toBe('{}');
    const loaded = readFileSync(rec, 'utf8').split('\n').filter(Boolean);
    expect(loaded.filter((u) => /commander/.test(u))).toEqual([]);
    expect(loaded.some((u) => u.endsWith('/cli.js'))).toBe(true);
  });

  it('--timeout out of range is refused with the reason', async () => {
    const r = await cli(['install', '--timeout', '2'], { env: { HERMES_HOME: path.join(tempDir(), 'untouched') } });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/between 6 and 300/);
  });
});
