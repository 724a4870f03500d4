/**
 * `npm test`'s step before any test: installs into the cache what the tiers need from a registry (test/prereqs/needs.ts),
 * one progress line each, each within a bound; when a registry cannot be reached it stops with one message saying what
 * was being fetched, from where, and how to provide it, and exits 1. With everything cached it prints one line and
 * touches no network.   node dist/test/prereqs/run.js
 */
import { execFileSync, spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from '../support/paths.js';
import { FETCH_LIMITS, NEEDS, type Need } from './needs.js';

interface Outcome {
  code: number | null;
  timedOut: boolean;
  stderr: string;
}

const cacheRoot = process.env.HERMES_AEP_CACHE || path.join(os.homedir(), '.cache', 'hermes-aep');
const say = (line: string): void => void process.stderr.write(`test-prereqs: ${line}\n`);

/** Runs one provision script in its own process group, killed whole (npm, pip and all) when it outlives `boundMs`. */
function provision(need: Need, extra: readonly string[], boundMs: number): Promise<Outcome> {
  return new Promise((resolve) => {
    const child = spawn('bash', [path.join(ROOT, 'scripts', need.script), ...need.args, ...extra], {
      env: { ...process.env, ...FETCH_LIMITS, ...need.env },
      stdio: ['ignore', 'ignore', 'pipe'],
      detached: true,
    });
    let stderr = '';
    let timedOut = false;
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-8192)));
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }, boundMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, timedOut, stderr });
    });
  });
}

/** The registry's address as npm or pip would use it (their own config; read only when something failed). */
function registryName(registry: Need['registry']): string {
  const ask = (cmd: string, args: string[]): string | undefined => {
    try {
      return execFileSync(cmd, args, { encoding: 'utf8', timeout: 10_000, stdio: ['ignore', 'pipe', 'ignore'] }).trim() || undefined;
    } catch {
      return undefined;
    }
  };
  if (registry === 'npm') return `the npm registry ${ask('npm', ['config', 'get', 'registry']) ?? '(npm config get registry)'}`;
  return `PyPI ${process.env.PIP_INDEX_URL || ask('python3', ['-m', 'pip', 'config', 'get', 'global.index-url']) || 'https://pypi.org/simple'}`;
}

function failure(need: Need, outcome: Outcome, missing: readonly Need[]): string {
  // npm's and pip's own reason ("request to ... failed, reason: getaddrinfo EAI_AGAIN ...", "ERROR: No matching distribution ..."),
  // else the script's last line: never their log paths
  const lines = outcome.stderr.split('\n').map((l) => l.trim());
  const reason = lines.find((l) => /reason:|^ERROR:/.test(l)) ?? lines.filter(Boolean).at(-1);
  const why = outcome.timedOut ? `no answer within ${need.boundMs / 1000} s` : (reason ?? `exit ${outcome.code}`);
  const fix = need.registry === 'npm' ? 'npm config set registry <url>' : 'pip config set global.index-url <url>';
  return (
    `could not fetch ${need.label}: ${need.fetched} from ${registryName(need.registry)} (${why}). ` +
    `npm test stops here, before any test. Provide it: run npm test once with network access, or point at a registry you can reach ` +
    `(${fix}), or set HERMES_AEP_CACHE to a cache that already holds ${missing.map((n) => n.cacheDir).join(', ')} (now: ${cacheRoot}).`
  );
}

async function main(): Promise<number> {
  const missing: Need[] = [];
  for (const need of NEEDS) {
    const cached = await provision(need, ['--cached'], 60_000);
    if (cached.code === 0) continue;
    if (cached.code !== 3) {
      say(`checking the cache for ${need.label} failed: ${cached.stderr.trim()}`);
      return 1;
    }
    missing.push(need);
  }
  if (missing.length === 0) {
    say(`${NEEDS.map((n) => n.cacheDir).join(', ')} cached in ${cacheRoot}`);
    return 0;
  }
  for (const [i, need] of missing.entries()) {
    say(`provisioning ${need.label} (once, ${need.typical})...`);
    const t0 = Date.now();
    const outcome = await provision(need, [], need.boundMs);
    if (outcome.code !== 0 || outcome.timedOut) {
      say(failure(need, outcome, missing.slice(i)));
      return 1;
    }
    say(`${need.label}: installed in ${Math.round((Date.now() - t0) / 1000)} s`);
  }
  return 0;
}

process.exitCode = await main();
