import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeRelease } from '../support/node-release.js';
import { ROOT } from '../support/paths.js';
import { httpCall, tempDir, waitFor } from '../support/processes.js';

/**
 * Issue 26's first "Done when": from a fresh clone, on a machine whose `node` is 20, the README's own commands
 * (Prerequisites, Quickstart) lead to a running daemon, a green `npm test` and a `hermes-aep demo` that shows a
 * trace, with nothing read but the README. The commands are taken from the README's code blocks, not restated here,
 * and run by bash exactly as written. What a test cannot do as the user would, and does instead:
 * - HOME is a fresh directory (so the daemon's socket, history and spans are the user's defaults, inside it);
 * - npm's global prefix (where `npm link` puts `hermes-aep`) is a directory of the test, put on PATH, so the shared
 *   Node cache is left as it was; npm's download cache and the Node cache are the machine's (warm, like a second try);
 * - the two quickstart commands run one after the other, each in its own clone, as the README suggests for
 *   `npm test` beside a running daemon.
 */

/** The shell commands of a README section's ```sh blocks, one per line, comments dropped. */
function readmeCommands(readme: string, heading: string): string[] {
  const start = readme.indexOf(`\n## ${heading}\n`);
  if (start === -1) throw new Error(`README has no "## ${heading}" section`);
  const end = readme.indexOf('\n## ', start + 1);
  const section = readme.slice(start, end === -1 ? undefined : end);
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)]
    .flatMap((m) => m[1]!.split('\n'))
    .map((l) => l.replace(/\s+#\s.*$/, '').trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
}

const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const prerequisites = readmeCommands(readme, 'Prerequisites');
const quickstart = readmeCommands(readme, 'Quickstart');
const provisionLine = prerequisites.find((c) => c.includes('provision-node.sh'));
const startLine = quickstart.find((c) => c.includes('npm start'));
const testLine = quickstart.find((c) => c.includes('npm test'));
const demoLine = quickstart.find((c) => c.startsWith('hermes-aep demo'));

describe("the README's prerequisites and quickstart, run as written, from a node 20 machine", () => {
  const work = tempDir('hermes-aep-readme-');
  const home = path.join(work, 'home');
  const prefix = path.join(work, 'npm-global');
  const daemonClone = path.join(work, 'daemon');
  const testClone = path.join(work, 'tests');
  let env: NodeJS.ProcessEnv;
  let daemon: ChildProcess | undefined;
  let daemonOut = '';
  const socket = path.join(home, '.aep', 'state', 'hermes-aep', 'hook.sock');

  /** bash -c, in `cwd`, with the test's environment: its stdout, and the whole output (stdout then stderr). */
  const sh = (script: string, cwd: string, timeoutMs: number) => {
    const r = spawnSync('bash', ['-c', script], { cwd, env, encoding: 'utf8', timeout: timeoutMs, maxBuffer: 256 * 1024 * 1024 });
    return { status: r.status, stdout: r.stdout ?? '', out: `${r.stdout ?? ''}${r.stderr ?? ''}` };
  };

  beforeAll(async () => {
    expect(provisionLine, 'the README gives the command that gets Node 24').toBeDefined();
    expect(startLine, "the README's quickstart starts the daemon").toBeDefined();
    expect(testLine, "the README's quickstart runs the tests").toBeDefined();
    expect(demoLine, "the README's quickstart ends with hermes-aep demo").toBeDefined();
    mkdirSync(home, { recursive: true });
    mkdirSync(path.join(prefix, 'bin'), { recursive: true });
    for (const dir of [daemonClone, testClone]) {
      const r = spawnSync('git', ['clone', '--quiet', ROOT, dir], { encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(0);
    }
    const node20 = await nodeRelease('20.20.2');
    env = {
      PATH: [path.dirname(node20), path.join(prefix, 'bin'), process.env.PATH ?? ''].join(path.delimiter),
      HOME: home,
      LANG: 'C.UTF-8',
      NO_COLOR: '1',
      HERMES_AEP_CACHE: process.env.HERMES_AEP_CACHE ?? path.join(os.homedir(), '.cache', 'hermes-aep'),
      npm_config_cache: process.env.npm_config_cache ?? path.join(os.homedir(), '.npm'),
      npm_config_prefix: prefix,
      npm_config_update_notifier: 'false',
      npm_config_fund: 'false',
      npm_config_audit: 'false',
    };
    expect(sh('node --version', work, 10_000).out.trim()).toMatch(/^v20\./);
  }, 120_000);

  afterAll(async () => {
    if (daemon?.pid !== undefined && daemon.exitCode === null) {
      process.kill(-daemon.pid, 'SIGTERM');
      await waitFor('the daemon the quickstart started to stop', () => daemon!.exitCode !== null || daemon!.signalCode !== null || undefined, 30_000).catch(
        () => process.kill(-daemon!.pid!, 'SIGKILL'),
      );
    }
    rmSync(work, { recursive: true, force: true });
  });

  it('on node 20 the first quickstart command stops at once, naming the Node it needs', () => {
    const r = sh(startLine!, daemonClone, 300_000);
    expect(r.status).not.toBe(0);
    expect(r.out).toContain('22.15');
    expect(existsSync(path.join(daemonClone, 'node_modules', 'fastify')), 'nothing installed').toBe(false);
    expect(r.out).not.toContain('listening');
    expect(existsSync(socket)).toBe(false);
  });

  it("after the prerequisites' command, node is 24 in that shell", () => {
    const r = sh(`${provisionLine!}\nnode --version`, daemonClone, 300_000);
    expect(r.status, r.out).toBe(0);
    expect(r.stdout.trim().split('\n').at(-1)).toMatch(/^v24\./);
  });

  it('the first quickstart command installs, links hermes-aep and runs the daemon on its default socket', async () => {
    daemon = spawn('bash', ['-c', `${provisionLine!}\n${startLine!}`], { cwd: daemonClone, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    daemon.stdout!.on('data', (c: Buffer) => (daemonOut += c.toString()));
    daemon.stderr!.on('data', (c: Buffer) => (daemonOut += c.toString()));
    const health = await waitFor(
      'the daemon to answer /healthz on its default socket',
      async () => {
        if (daemon!.exitCode !== null) throw new Error(`the quickstart ended (${daemon!.exitCode}):\n${daemonOut.slice(-4000)}`);
        if (!existsSync(socket)) return undefined;
        const r = await httpCall({ socketPath: socket }, { path: '/healthz' }).catch(() => undefined);
        return r?.status === 200 ? r : undefined;
      },
      600_000,
      250,
    );
    expect(JSON.parse(health.body)).toMatchObject({ ok: true });
    expect(existsSync(path.join(prefix, 'bin', 'hermes-aep')), 'npm link put hermes-aep on PATH').toBe(true);
  }, 660_000);

  it('hermes-aep demo, the quickstart’s last step, shows a trace that is in the spans file', () => {
    // the user's shell is still in the clone (the README's commands all run there)
    const r = sh(`${provisionLine!}\n${demoLine!}`, daemonClone, 180_000);
    expect(r.status, r.out).toBe(0);
    const traceId = /\b([0-9a-f]{32})\b/.exec(r.out)?.[1];
    expect(traceId, `a trace id in the demo's output:\n${r.out}`).toBeDefined();
    const spans = readFileSync(path.join(home, '.aep', 'logs', 'otel', 'spans.jsonl'), 'utf8');
    expect(spans).toContain(traceId!);
    expect(r.out).toContain(path.join(home, '.aep', 'logs', 'hermes'));
  }, 200_000);

  it('the second quickstart command, in its own clone, passes the tests', () => {
    const r = sh(`${provisionLine!}\n${testLine!}`, testClone, 1_800_000);
    expect(r.status, r.out.slice(-6000)).toBe(0);
    expect(r.out).toMatch(/Test Files\s+\d+ passed/);
  }, 1_900_000);
});
