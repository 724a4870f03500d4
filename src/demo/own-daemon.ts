/**
 * The daemon the demo starts when none answers: `hermes-aep daemon` as a
 * child process with the demo's own environment (so the same settings: state
 * dir, socket, port, log dir, OTEL_*), ready once it logs its listening line,
 * stopped with SIGTERM at the end (the graceful path: spans flushed, history
 * synced), SIGKILL only if it outlives the deadline.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DaemonAddress } from './health-probe.js';

const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'cli.js');
const LISTENING = 'hermes-aep daemon listening';

export interface OwnDaemon {
  readonly pid: number;
  readonly address: DaemonAddress;
  /** SIGTERM, wait for its exit (SIGKILL after `ms`); its exit code */
  stop(ms?: number): Promise<number | null>;
}

/** The message of the daemon's last error line (its log lines are JSON and never carry content). */
function lastError(stderr: string): string | undefined {
  let msg: string | undefined;
  for (const line of stderr.split('\n')) {
    try {
      const v = JSON.parse(line) as { level?: unknown; msg?: unknown };
      if ((v.level === 'error' || v.level === 'fatal') && typeof v.msg === 'string') msg = v.msg;
    } catch {
      if (line.trim() !== '') msg = line.trim();
    }
  }
  return msg;
}

function stopper(child: ChildProcess, exited: Promise<number | null>) {
  return async (ms = 20_000): Promise<number | null> => {
    if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), ms);
    try {
      return await exited;
    } finally {
      clearTimeout(timer);
    }
  };
}

export function startOwnDaemon(timeoutMs = 30_000): Promise<OwnDaemon> {
  const child = spawn(process.execPath, [CLI, 'daemon'], { env: process.env, stdio: ['ignore', 'ignore', 'pipe'] });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  let stderr = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the daemon it started did not listen within ${timeoutMs / 1000} s`));
    }, timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`could not start a daemon (${(err as NodeJS.ErrnoException).code ?? err.message})`));
    });
    void exited.then((code) => {
      clearTimeout(timer);
      const why = lastError(stderr);
      reject(new Error(`the daemon it started exited (${code ?? 'signal'})${why !== undefined ? `: ${why}` : ''}`));
    });
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString('utf8');
      const line = stderr.split('\n').find((l) => l.includes(LISTENING));
      if (line === undefined) return;
      clearTimeout(timer);
      // it keeps logging to a pipe nobody reads otherwise
      child.stderr.removeAllListeners('data');
      child.stderr.resume();
      const listening = JSON.parse(line) as { socket?: string; url?: string };
      const address: DaemonAddress = listening.socket
        ? { kind: 'socket', path: listening.socket }
        : { kind: 'url', origin: new URL(listening.url ?? '').origin };
      resolve({ pid: child.pid!, address, stop: stopper(child, exited) });
    });
  });
}
