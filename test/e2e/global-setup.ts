import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from '../support/paths.js';
import { E2E_HERMES_VERSIONS, hermesBinEnv, PINNED_HERMES_VERSION } from './support/hermes-versions.js';

const run = promisify(execFile);

/** Run one provision script; its `NAME=value` lines come back as a map. */
async function provision(script: string, env: Record<string, string> = {}, label = script): Promise<Map<string, string>> {
  const t0 = Date.now();
  const { stdout } = await run('bash', [path.join(ROOT, 'scripts', script)], {
    env: { ...process.env, ...env },
    maxBuffer: 64 * 1024 * 1024,
    timeout: 45 * 60_000,
  });
  const out = new Map<string, string>();
  for (const line of stdout.split('\n')) {
    const m = /^([A-Z][A-Z0-9_]*)=(.+)$/.exec(line.trim());
    if (m) out.set(m[1]!, m[2]!);
  }
  console.log(`[e2e] ${label}: ${Math.round((Date.now() - t0) / 1000)} s`);
  return out;
}

/**
 * Provisions the real components the end-to-end tier runs (the collector and
 * Jaeger built from the Go module proxy, every Hermes release in
 * E2E_HERMES_VERSIONS from PyPI, the config linters, Debian's chromium), each into a
 * version-keyed cache outside the working tree, and publishes their paths to
 * the test workers as environment variables (`E2E_<NAME>`; Hermes as
 * `E2E_HERMES_<version>`, and `E2E_HERMES` for the design record's release).
 * A warm cache makes this a few milliseconds per script.
 */
export default async function setup(): Promise<void> {
  const publish = (vars: Map<string, string>) => {
    for (const [k, v] of vars) process.env[`E2E_${k}`] = v;
  };
  publish(await provision('provision-otel.sh'));
  for (const version of E2E_HERMES_VERSIONS) {
    const vars = await provision('provision-hermes.sh', { HERMES_VERSION: version }, `provision-hermes.sh ${version}`);
    const bin = vars.get('HERMES');
    if (!bin) throw new Error(`provision-hermes.sh ${version} printed no HERMES= line`);
    process.env[hermesBinEnv(version)] = bin;
    if (version === PINNED_HERMES_VERSION) process.env.E2E_HERMES = bin;
  }
  publish(await provision('provision-lint.sh'));
  // the live view's browser tests drive Debian's chromium (as E2E_CHROMIUM)
  publish(await provision('provision-chromium.sh'));
}
