import { spawn } from 'node:child_process';
import path from 'node:path';
import { ROOT } from '../../support/paths.js';

/** Run dist/test/bench/support/pipeline-worker.js, its daemon's log and state under `root` (`env`: more daemon settings); resolves with its JSON line. */
export function runPipelineWorker<T>(args: readonly string[], root: string, nodeArgs: readonly string[] = [], env: Record<string, string> = {}): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeArgs, path.join(ROOT, 'dist', 'test', 'bench', 'support', 'pipeline-worker.js'), ...args], {
      env: { ...process.env, AEP_PORT: '', OTEL_TRACES_EXPORTER: 'file', AEP_LOG_DIR: path.join(root, 'log'), AEP_STATE_DIR: path.join(root, 'state'), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`pipeline worker exited ${code}: ${err.slice(-2000)}`));
      try {
        resolve(JSON.parse(out.trim().split('\n').pop() ?? '') as T);
      } catch {
        reject(new Error(`pipeline worker printed no JSON: ${out.slice(-500)} ${err.slice(-500)}`));
      }
    });
  });
}
