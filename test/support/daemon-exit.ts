import { spawn } from 'node:child_process';
import { CLI } from './paths.js';

export interface DaemonExit {
  readonly code: number | null;
  readonly stderr: string;
  /** still running at the deadline, so killed (its own pid) */
  readonly killed: boolean;
}

/** The built `hermes-aep daemon` with these settings, expected to exit by itself: its exit code and stderr. */
export function daemonUntilExit(env: Record<string, string>, deadlineMs: number): Promise<DaemonExit> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, 'daemon'], { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    let killed = false;
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    const timer = setTimeout(() => {
      killed = true;
      child.kill('SIGKILL');
    }, deadlineMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr, killed });
    });
  });
}
