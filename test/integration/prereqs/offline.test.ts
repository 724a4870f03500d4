/**
 * `npm test`'s prerequisites step (test/prereqs/run.ts, built) with no network at all: run in a network namespace of
 * its own, it either stops with one message naming the registry, what it was fetching and how to provide it (empty
 * cache), or passes without the network (the cache `npm test` warmed before this tier). The whole `npm test` is not
 * run here (it runs this file); its first step after the build is this one, so this is what an offline `npm test` meets.
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../../support/paths.js';
import { tempDir } from '../../support/processes.js';
import { OLD_NODE_RELEASES } from '../../support/node-release.js';
import { NEEDS } from '../../prereqs/needs.js';

const run = promisify(execFile);
const STEP = path.join(ROOT, 'dist', 'test', 'prereqs', 'run.js');

/** The command prefix that runs a process with no network: `unshare -n` as root, else in a user namespace of its own. */
function offline(): string[] {
  const tried: string[] = [];
  for (const prefix of [
    ['unshare', '-n'],
    ['unshare', '--user', '--map-root-user', '-n'],
  ]) {
    try {
      execFileSync(prefix[0]!, [...prefix.slice(1), 'true'], { stdio: 'pipe' });
      return prefix;
    } catch (err) {
      tried.push(`${prefix.join(' ')}: ${(err as { stderr?: Buffer }).stderr?.toString().trim() || (err as Error).message}`);
    }
  }
  throw new Error(`cannot make a network namespace to test the offline path (util-linux unshare, root or user namespaces): ${tried.join('; ')}`);
}

async function stepOffline(env: NodeJS.ProcessEnv): Promise<{ code: number; stderr: string; seconds: number }> {
  const [cmd, ...args] = offline();
  const t0 = Date.now();
  try {
    const { stderr } = await run(cmd!, [...args, process.execPath, STEP], { env: { ...process.env, ...env } });
    return { code: 0, stderr, seconds: (Date.now() - t0) / 1000 };
  } catch (err) {
    const e = err as { code?: number; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stderr: e.stderr ?? '', seconds: (Date.now() - t0) / 1000 };
  }
}

/** npm's and pip's own caches emptied too: neither may answer from a download made earlier. */
function emptyCaches(dir: string): NodeJS.ProcessEnv {
  return { npm_config_cache: path.join(dir, 'npm'), PIP_CACHE_DIR: path.join(dir, 'pip') };
}

describe("npm test's prerequisites step in a network namespace without the registry", () => {
  it('with an empty cache: stops with one message naming the npm registry, the package, and the three ways to provide it', { timeout: 180_000 }, async () => {
    const dir = tempDir();
    const cache = path.join(dir, 'cache');
    const r = await stepOffline({ HERMES_AEP_CACHE: cache, ...emptyCaches(dir) });
    console.log(`prerequisites step offline, empty cache: exit ${r.code} after ${r.seconds.toFixed(1)} s\n${r.stderr}`);
    expect(r.code).toBe(1);
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^test-prereqs: provisioning Node \d+\.\d+\.\d+ for the old-node shim tests \(once, ~8 s\)\.\.\.$/);
    const release = /Node (\S+) for/.exec(lines[0]!)![1]!;
    expect(lines[1]).toContain(`could not fetch Node ${release} for the old-node shim tests: the npm package node@${release} from the npm registry http`);
    expect(lines[1]).toContain('npm test stops here, before any test');
    expect(lines[1]).toContain('run npm test once with network access');
    expect(lines[1]).toContain('npm config set registry <url>');
    expect(lines[1]).toContain(`set HERMES_AEP_CACHE to a cache that already holds node-${release}`);
    // nothing half-installed is left behind to be mistaken for the release next time
    expect(existsSync(path.join(cache, `node-${release}`))).toBe(false);
  });

  it('with the Node releases cached but not Hermes: names PyPI and the Hermes release instead', { timeout: 180_000 }, async () => {
    const dir = tempDir();
    const cache = path.join(dir, 'cache');
    mkdirSync(cache);
    for (const release of OLD_NODE_RELEASES) symlinkSync(path.join(process.env.HERMES_AEP_CACHE!, `node-${release}`), path.join(cache, `node-${release}`));
    const r = await stepOffline({ HERMES_AEP_CACHE: cache, ...emptyCaches(dir) });
    console.log(`prerequisites step offline, Node cached, Hermes not: exit ${r.code} after ${r.seconds.toFixed(1)} s\n${r.stderr}`);
    expect(r.code).toBe(1);
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^test-prereqs: provisioning Hermes \S+ for the doctor tests/);
    expect(lines[1]).toMatch(/could not fetch Hermes \S+ for the doctor tests: the PyPI package hermes-agent==\S+ and its dependencies from PyPI /);
    expect(lines[1]).toContain('pip config set global.index-url <url>');
    expect(lines[1]).not.toContain('node-');
  });

  it('with the cache npm test warmed: passes offline, one line', { timeout: 60_000 }, async () => {
    const dir = tempDir();
    const r = await stepOffline(emptyCaches(dir));
    console.log(`prerequisites step offline, warm cache: exit ${r.code} after ${r.seconds.toFixed(1)} s\n${r.stderr}`);
    expect([r.code, r.stderr]).toEqual([0, `test-prereqs: ${NEEDS.map((n) => n.cacheDir).join(', ')} cached in ${process.env.HERMES_AEP_CACHE}\n`]);
  });
});
