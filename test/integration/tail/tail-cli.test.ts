// `hermes-aep tail` as a process: help, the history fallback rendered for a reader,
// colors only when forced on a pipe, and a bad option named without its value.
import { spawn } from 'node:child_process';
import { cpSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI, ROOT } from '../../support/paths.js';
import { tempDir } from '../../support/processes.js';

function tail(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const state = tempDir();
  const logs = path.join(state, 'logs');
  cpSync(path.join(ROOT, 'fixtures/golden-history/0.19.0/tty-approval-once/hermes'), path.join(logs, 'hermes'), { recursive: true });
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, 'tail', ...args], {
      env: { ...process.env, NO_COLOR: '', FORCE_COLOR: '', AEP_STATE_DIR: state, AEP_LOG_DIR: logs, TZ: 'UTC', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('hermes-aep tail (process)', () => {
  it('--help lists every option', async () => {
    const r = await tail(['--help']);
    expect(r.code).toBe(0);
    for (const o of ['--url', '--socket', '--token', '--session', '--type', '--filter', '--lines', '--from', '--capture', '--json', '--no-follow', 'NO_COLOR'])
      expect(r.stdout).toContain(o);
  });

  it('no daemon: --no-follow renders the history, one line per event, no colors on a pipe', async () => {
    const r = await tail(['--no-follow']);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(10);
    expect(lines[0]).toBe('19:00:01.000 962745            session.started client=hermes');
    expect(lines[4]).toContain('attention.requested delete in root path kind=permission');
    expect(r.stdout).not.toContain('\u001b[');
    expect(r.stderr).toContain('no daemon stream');
  });

  it('FORCE_COLOR=1 colors a pipe; --json never', async () => {
    const colored = await tail(['--no-follow'], { FORCE_COLOR: '1' });
    expect(colored.stdout).toContain('\u001b[');
    const json = await tail(['--no-follow', '--json', '--type', 'run.*'], { FORCE_COLOR: '1' });
    expect(json.stdout).not.toContain('\u001b[');
    expect(
      json.stdout
        .trimEnd()
        .split('\n')
        .map((l) => (JSON.parse(l) as { type: string }).type),
    ).toEqual(['run.started', 'run.finished']);
  });

  it('a bad option exits 1 naming the option, never the value', async () => {
    const r = await tail(['--url', 'http://127.0.0.1:1/?access_token=SECRET-MARKER']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('hermes-aep tail: --url');
    expect(r.stderr).not.toContain('SECRET-MARKER');
  });
});
