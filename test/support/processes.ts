import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CLI, SHIM } from './paths.js';

export interface DaemonProcess {
  readonly url: string;
  readonly hookUrl: string;
  readonly logDir: string;
  readonly stateDir: string;
  readonly child: ChildProcess;
  stderr(): string;
  /** SIGTERM and wait for exit (the graceful path) */
  stop(): Promise<number | null>;
  /** SIGKILL and wait (the crash path) */
  kill(): Promise<void>;
  health(): Promise<Record<string, any>>;
}

/** Resolve when `pred` holds, polling; reject at the deadline with `what` in the message. */
export async function waitFor<T>(what: string, fn: () => T | undefined | Promise<T | undefined>, ms = 15_000, every = 20): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== false) return v as T;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, every));
  }
}

export function tempDir(prefix = 'hermes-aep-test-'): string {
  return mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** Start the compiled daemon on a free loopback port (AEP_PORT=0) and wait for its listening line. */
export async function startDaemonProcess(env: Record<string, string> = {}, dirs?: { logDir: string; stateDir: string }): Promise<DaemonProcess> {
  const base = dirs ? undefined : tempDir();
  const logDir = dirs?.logDir ?? path.join(base!, 'log');
  const stateDir = dirs?.stateDir ?? path.join(base!, 'state');
  const child = spawn(process.execPath, [CLI, 'daemon'], {
    env: { ...process.env, AEP_HOST: '127.0.0.1', AEP_PORT: '0', AEP_LOG_DIR: logDir, AEP_STATE_DIR: stateDir, OTEL_TRACES_EXPORTER: 'none', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr!.on('data', (c: Buffer) => (err += c.toString('utf8')));
  child.stdout!.resume();
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const url = await Promise.race([
    waitFor('daemon listening line', () => /"url":"(http:\/\/[^"]+)"/.exec(err)?.[1], 20_000),
    exited.then((code) => {
      throw new Error(`daemon exited early (${code}): ${err}`);
    }),
  ]);
  return {
    url,
    hookUrl: `${url}/hook`,
    logDir,
    stateDir,
    child,
    stderr: () => err,
    stop: async () => {
      if (child.exitCode !== null) return child.exitCode;
      child.kill('SIGTERM');
      return exited;
    },
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await exited;
      }
    },
    health: async () => (await (await fetch(`${url}/healthz`)).json()) as Record<string, any>,
  };
}

export interface ShimResult {
  readonly stdout: string;
  readonly stderr: string;
  readonly code: number | null;
  readonly ms: number;
}

let shimStateDir: string | undefined;

/**
 * Run the real shim exactly as Hermes does with the installed command
 * (`node <dist>/src/shim/hook.cjs`): argv, stdin JSON, read stdout.
 * `via: 'cli'` runs the same shim as `hermes-aep hook` instead.
 */
export function runShim(input: string | Buffer, env: Record<string, string>, via: 'shim' | 'cli' = 'shim', args: readonly string[] = []): Promise<ShimResult> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const argv = [...(via === 'shim' ? [SHIM] : [CLI, 'hook']), ...args];
    // a hook the shim cannot deliver is spooled under its state dir: a temp one unless the test names it
    shimStateDir ??= tempDir('hermes-aep-shim-state-');
    const child = spawn(process.execPath, argv, { env: { ...process.env, AEP_STATE_DIR: shimStateDir, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ stdout: out, stderr: err, code, ms: performance.now() - t0 }));
    child.stdin.on('error', () => undefined);
    child.stdin.end(input);
  });
}
