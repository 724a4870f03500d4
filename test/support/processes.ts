import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { CLI, ROOT, SHIM } from './paths.js';

export interface DaemonProcess {
  /** the TCP listener (`http://127.0.0.1:port`); '' when started without AEP_PORT */
  readonly url: string;
  /** `${url}/hook`: over TCP every POST needs `authHeaders` */
  readonly hookUrl: string;
  /** the Unix socket (the default transport: no token) */
  readonly socketPath: string;
  /** `Authorization: Bearer <token>` for POSTs over TCP ({} without TCP) */
  readonly authHeaders: Record<string, string>;
  /** the env that points the shim at this daemon (its socket) */
  readonly shimEnv: Record<string, string>;
  readonly historyDir: string;
  readonly stateDir: string;
  readonly child: ChildProcess;
  stderr(): string;
  /** SIGTERM and wait for exit (the graceful path) */
  stop(): Promise<number | null>;
  /** SIGKILL and wait (the crash path) */
  kill(): Promise<void>;
  /** GET /healthz over the socket */
  health(): Promise<Record<string, any>>;
}

export interface HttpReply {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** One HTTP request over a Unix socket (`socketPath`) or TCP (`url`), with the body read whole. */
export function httpCall(
  to: { socketPath: string } | { url: string },
  o: { method?: string; path?: string; headers?: Record<string, string | number>; body?: string | Buffer; timeoutMs?: number } = {},
): Promise<HttpReply> {
  return new Promise((resolve, reject) => {
    const base =
      'socketPath' in to
        ? { socketPath: to.socketPath, path: o.path ?? '/' }
        : (() => {
            const u = new URL(o.path ?? '/', to.url);
            return { host: u.hostname, port: u.port, path: `${u.pathname}${u.search}` };
          })();
    const req = httpRequest({ ...base, method: o.method ?? 'GET', headers: o.headers ?? {}, agent: false, timeout: o.timeoutMs ?? 30_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('request timed out')));
    req.on('error', reject);
    req.end(o.body);
  });
}

/** Resolve when `pred` holds, polling; reject at the deadline with `what` in the message. */
export async function waitFor<T>(what: string, fn: () => T | undefined | Promise<T | undefined>, ms = 15_000, every = 20): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, every));
  }
}

export function tempDir(prefix = 'hermes-aep-test-'): string {
  return mkdtempSync(path.join(os.tmpdir(), prefix));
}

/**
 * Start the compiled daemon and wait for its listening line: its Unix socket
 * under the state dir, plus TCP on a free loopback port (AEP_PORT=0; pass
 * `AEP_PORT: ''` for the socket alone).
 */
export async function startDaemonProcess(
  env: Record<string, string> = {},
  dirs?: { historyDir: string; stateDir: string },
  /** a command the daemon runs under (e.g. `prlimit --nofile=128:128`): node and its arguments are appended */
  launcher: readonly string[] = [],
): Promise<DaemonProcess> {
  const base = dirs ? undefined : tempDir();
  const historyDir = dirs?.historyDir ?? path.join(base!, 'log');
  const stateDir = dirs?.stateDir ?? path.join(base!, 'state');
  const [cmd, ...args] = [...launcher, process.execPath, CLI, 'daemon'];
  const child = spawn(cmd, args, {
    env: { ...process.env, AEP_HOST: '127.0.0.1', AEP_PORT: '0', AEP_LOG_DIR: historyDir, AEP_STATE_DIR: stateDir, OTEL_TRACES_EXPORTER: 'none', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
  child.stdout.resume();
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const line = await Promise.race([
    waitFor('daemon listening line', () => /^.*"msg":"hermes-aep daemon listening".*$/m.exec(err)?.[0], 20_000),
    exited.then((code) => {
      throw new Error(`daemon exited early (${code}): ${err}`);
    }),
  ]);
  const listening = JSON.parse(line) as { url?: string; socket?: string };
  const url = listening.url ?? '';
  const socketPath = listening.socket ?? '';
  const tokenFile = env.AEP_TOKEN_FILE || path.join(stateDir, 'hook-token');
  let authHeaders: Record<string, string> = {};
  try {
    if (url) authHeaders = { authorization: `Bearer ${readFileSync(tokenFile, 'utf8').trim()}` };
  } catch {
    authHeaders = {}; // a daemon that made no token: requests go without
  }
  return {
    url,
    hookUrl: url ? `${url}/hook` : '',
    socketPath,
    authHeaders,
    shimEnv: socketPath ? { AEP_SOCKET: socketPath } : { AEP_HOOK_URL: `${url}/hook`, AEP_TOKEN_FILE: tokenFile },
    historyDir,
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
    health: async () => {
      const r = await httpCall(socketPath ? { socketPath } : { url }, { path: '/healthz', headers: { host: 'localhost' } });
      return JSON.parse(r.body) as Record<string, any>;
    },
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
 * `via: 'cli'` runs the same shim as `hermes-aep hook` instead; `node` picks another Node binary than the runner's.
 */
export function runShim(
  input: string | Buffer,
  env: Record<string, string>,
  via: 'shim' | 'cli' = 'shim',
  args: readonly string[] = [],
  node = process.execPath,
): Promise<ShimResult> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const argv = [...(via === 'shim' ? [SHIM] : [CLI, 'hook']), ...args];
    // a hook the shim cannot deliver is spooled under its state dir: a temp one unless the test names it
    shimStateDir ??= tempDir('hermes-aep-shim-state-');
    const child = spawn(node, argv, { env: { ...process.env, AEP_STATE_DIR: shimStateDir, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
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

export interface StallProbe {
  /** the slowest /healthz answer (ms) since the previous report, with how many answered and failed */
  report(): Promise<{ max_ms: number; n: number; failed: number }>;
  stop(): Promise<void>;
}

/**
 * A separate process polling the daemon's /healthz every 10 ms
 * (test/support/stall-probe.ts): the longest wait is how long the daemon
 * stalled every other hook.
 */
export async function startStallProbe(d: DaemonProcess): Promise<StallProbe> {
  const child = spawn(process.execPath, [path.join(ROOT, 'dist', 'test', 'support', 'stall-probe.js')], {
    env: { ...process.env, ...(d.socketPath ? { PROBE_SOCKET: d.socketPath } : { PROBE_URL: d.url }) },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const report = async () => {
    const before = out.length;
    child.stdin.write('report\n');
    const line = await waitFor(
      'stall probe report',
      () => (out.indexOf('\n', before) > 0 ? out.slice(before, out.indexOf('\n', before)) : undefined),
      10_000,
      5,
    );
    return JSON.parse(line) as { max_ms: number; n: number; failed: number };
  };
  // the probe has answered at least once before anything is measured
  await waitFor('stall probe running', async () => ((await report()).n > 0 ? true : undefined), 10_000, 50);
  return {
    report,
    stop: async () => {
      child.stdin.end();
      await exited;
    },
  };
}
