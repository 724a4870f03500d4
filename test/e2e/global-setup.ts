import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from '../support/paths.js';

const run = promisify(execFile);

/**
 * Provisions the real components the end-to-end tier runs (the collector and
 * Jaeger built from the Go module proxy, Hermes from PyPI, the config
 * linters), each into a version-keyed cache outside the working tree, and
 * publishes their paths to the test workers as environment variables. A
 * warm cache makes this a few milliseconds per script.
 */
export default async function setup(): Promise<void> {
  for (const script of ['provision-otel.sh', 'provision-hermes.sh', 'provision-lint.sh']) {
    const t0 = Date.now();
    const { stdout } = await run('bash', [path.join(ROOT, 'scripts', script)], { maxBuffer: 64 * 1024 * 1024, timeout: 45 * 60_000 });
    for (const line of stdout.split('\n')) {
      const m = /^([A-Z][A-Z0-9_]*)=(.+)$/.exec(line.trim());
      if (m) process.env[`E2E_${m[1]}`] = m[2];
    }
    console.log(`[e2e] ${script}: ${Math.round((Date.now() - t0) / 1000)} s`);
  }
}
