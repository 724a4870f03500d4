/**
 * `hermes-aep doctor` as a user runs it (the built CLI, a child process) against each broken case of issue 26 (a
 * vanished pinned runtime, no daemon, a missing token with TCP in use, a Hermes whose hook list drifted), and once all
 * well: a daemon started here, an install into a temp HERMES_HOME pointed at it, a stand-in Hermes with the baseline
 * hook list. Also the runtime `install` pins: a node on PATH outside the caches, else the running one with a warning.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, realpathSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { BASELINE_HOOKS } from '../../../src/hermes/known-hooks.js';
import { hermesTree } from '../../support/hermes-tree.js';
import { pathWithOnlyThisNode } from '../../support/node-path.js';
import { CLI } from '../../support/paths.js';
import { freePort } from '../../support/ports.js';
import { startDaemonProcess, tempDir, type DaemonProcess } from '../../support/processes.js';

const run = promisify(execFile);

/** The caller's environment without any AEP_*, HERMES_HOME or OTLP endpoint setting, plus `extra`. */
function envFor(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(env)) if (/^(AEP_|HERMES_HOME$|HERMES_AEP_CACHE$|XDG_CACHE_HOME$|OTEL_EXPORTER_OTLP_)/.test(k)) delete env[k];
  return { ...env, PATH: pathWithOnlyThisNode(), ...extra };
}

async function cli(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args], { env });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** The line of the check named `what`, and its fix line when it has one. */
function checkLines(stdout: string, what: RegExp): string[] {
  const lines = stdout.split('\n');
  const i = lines.findIndex((l) => /^(ok {2}|warn|FAIL) {2}/.test(l) && what.test(l));
  if (i < 0) return [];
  return lines[i + 1]?.startsWith('      fix: ') ? [lines[i]!, lines[i + 1]!] : [lines[i]!];
}

/** A Hermes stand-in whose VALID_HOOKS is exactly the baseline (no drift), or that plus `extra`. */
function baselineHermes(extra: readonly string[] = []): string {
  const names = [...BASELINE_HOOKS, ...extra].map((h) => `    "${h}",`).join('\n');
  return hermesTree({ init: '__version__ = "0.19.0"\n', plugins: `VALID_HOOKS = {\n${names}\n}\n` });
}

/** A `node` that is a script running this node: outside every cache directory, and deletable. */
function nodeScript(dir: string): string {
  const file = path.join(dir, 'node');
  writeFileSync(file, `#!/bin/sh\nexec '${process.execPath}' "$@"\n`, { mode: 0o755 });
  return file;
}

const daemons: DaemonProcess[] = [];
afterEach(async () => {
  await Promise.all(daemons.splice(0).map((d) => d.stop()));
});

describe('install pins a runtime that survives a cache clean', () => {
  // the running node is made a cache's (HERMES_AEP_CACHE is its directory), whatever machine runs this
  const cache = path.dirname(realpathSync(process.execPath));

  it('a node on PATH outside the caches is the one pinned, and the report says so; deleted, doctor says FAIL with the fix', async () => {
    const home = tempDir();
    const state = tempDir();
    const bin = tempDir();
    const node = nodeScript(bin);
    const env = envFor({ HERMES_HOME: home, AEP_STATE_DIR: state, HERMES_AEP_CACHE: cache, PATH: `${bin}${path.delimiter}${pathWithOnlyThisNode()}` });
    const r = await cli(['install', '--transport', 'shell'], env);
    console.log(r.stdout);
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(r.stdout).toContain(
      `  runtime: ${node} (${process.version}, the first node on PATH outside a cache directory; the node running install, ${process.execPath}, is under ${cache})`,
    );
    expect(r.stdout).not.toContain('warning:');
    expect(readFileSync(path.join(home, 'config.yaml'), 'utf8')).toContain(`- command: ${node} ${path.join(state, 'shim')}`);

    const before = await cli(['doctor', '--hermes', baselineHermes()], env);
    expect(checkLines(before.stdout, /registered command:/)).toEqual([
      `ok    registered command: ${node} (${process.version}) runs ${path.join(state, 'shim', readVersion(), 'hook.cjs')}`,
    ]);

    unlinkSync(node); // the cache clean
    const after = await cli(['doctor', '--hermes', baselineHermes()], env);
    console.log(after.stdout);
    expect(after.code).toBe(1);
    expect(checkLines(after.stdout, /registered command:/)).toEqual([
      `FAIL  registered command: its runtime ${node} does not exist: every hook fails open silently`,
      '      fix: hermes-aep install (again, with a node 18+ outside cache directories first on PATH)',
    ]);
  });

  it('only a node under a cache directory: that one, with a warning naming the risk and hermes-aep doctor', async () => {
    const home = tempDir();
    const state = tempDir();
    const bin = tempDir();
    symlinkSync(process.execPath, path.join(bin, 'node')); // on PATH, but really in the cache
    const env = envFor({ HERMES_HOME: home, AEP_STATE_DIR: state, HERMES_AEP_CACHE: cache, PATH: `${bin}${path.delimiter}${pathWithOnlyThisNode()}` });
    const r = await cli(['install', '--transport', 'shell'], env);
    console.log(r.stdout);
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(r.stdout).toContain(`  runtime: ${process.execPath} (${process.version}, the node running install)\n`);
    expect(r.stdout).toContain(
      `  warning: the runtime ${process.execPath} is under the cache directory ${cache}: when that is cleaned every hook fails open silently; put a node 18+ outside caches first on PATH and install again, and check with hermes-aep doctor\n`,
    );
  });
});

function readVersion(): string {
  return (JSON.parse(readFileSync(path.join(path.dirname(CLI), '..', '..', 'package.json'), 'utf8')) as { version: string }).version;
}

describe('doctor finds each broken case, with its fix', () => {
  it('daemon down (no socket): FAIL naming hermes-aep daemon and npm start, exit 1', async () => {
    const state = tempDir();
    const r = await cli(['doctor', '--hermes', baselineHermes()], envFor({ HERMES_HOME: tempDir(), AEP_STATE_DIR: state }));
    console.log(r.stdout);
    expect([r.code, r.stderr]).toEqual([1, '']);
    expect(checkLines(r.stdout, /^FAIL {2}daemon /)).toEqual([
      `FAIL  daemon (unix socket ${path.join(state, 'hook.sock')}): no socket file: no daemon is running there`,
      '      fix: start it: hermes-aep daemon (or npm start in the checkout), with the same AEP_STATE_DIR / AEP_SOCKET / AEP_PORT as here',
    ]);
  });

  it('TCP in use (AEP_PORT) and no token file: FAIL, exit 1', async () => {
    const state = tempDir();
    const port = await freePort();
    const r = await cli(['doctor', '--hermes', baselineHermes()], envFor({ HERMES_HOME: tempDir(), AEP_STATE_DIR: state, AEP_PORT: String(port) }));
    console.log(r.stdout);
    expect(r.code).toBe(1);
    expect(checkLines(r.stdout, /token:/)).toEqual([
      `FAIL  token: ${path.join(state, 'hook-token')} is missing, and TCP is in use: every hook over TCP is refused (401)`,
      '      fix: start the daemon once (hermes-aep daemon creates it), or hermes-aep install',
    ]);
    expect(checkLines(r.stdout, /daemon \(http:/)[0]).toMatch(new RegExp(`^FAIL {2}daemon \\(http://127\\.0\\.0\\.1:${port}\\): connection refused`));
  });

  it('a Hermes whose hook list the mapping does not know (the fake tree): drift is FAIL, the names shown, exit 1', async () => {
    const tree = baselineHermes(['on_future_thing']);
    const r = await cli(['doctor', '--hermes', tree], envFor({ HERMES_HOME: tempDir(), AEP_STATE_DIR: tempDir() }));
    console.log(r.stdout);
    expect(r.code).toBe(1);
    expect(checkLines(r.stdout, /hermes:/)[0]).toBe(`FAIL  hermes: drift: Hermes at ${path.join(tree, 'hermes_cli')} (found via --hermes ${tree})`);
    expect(r.stdout).toContain('      unknown to the mapping: on_future_thing\n');
    expect(r.stdout).toContain('      fix: update hermes-aep (git pull && npm run build in the checkout); docs/hermes-drift.md says how to read the lists\n');
  });
});

describe('doctor when all is well', () => {
  it('a daemon started here, an install pointed at it, a Hermes without drift: every check ok (or warn), exit 0; a dead OTLP port warns', async () => {
    const base = tempDir();
    const state = path.join(base, 'state');
    const logs = path.join(base, 'logs');
    mkdirSync(state);
    const d = await startDaemonProcess({ AEP_PORT: '' }, { historyDir: logs, stateDir: state });
    daemons.push(d);
    const home = tempDir();
    const env = envFor({ HERMES_HOME: home, AEP_STATE_DIR: state, AEP_LOG_DIR: logs });
    const installed = await cli(['install', '--transport', 'shell'], env);
    expect([installed.code, installed.stderr]).toEqual([0, '']);
    const tree = baselineHermes();
    const r = await cli(['doctor', '--hermes', tree], env);
    console.log(r.stdout);
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(r.stdout).not.toMatch(/^FAIL/m);
    for (const what of ['runtime', 'daemon', 'transport', 'registered target', 'token', 'allowlist', 'hermes', 'otlp endpoint'])
      expect(checkLines(r.stdout, new RegExp(`^ok {4}${what}[ :(]`)), what).toHaveLength(1);
    expect(r.stdout).toContain(`ok    daemon (unix socket ${path.join(state, 'hook.sock')}): answers /healthz: version ${readVersion()}`);
    expect(r.stdout).toContain(`ok    registered target: unix socket ${path.join(state, 'hook.sock')}, where the daemon answers`);
    expect(r.stdout).toContain(`ok    allowlist: ${path.join(home, 'shell-hooks-allowlist.json')} approves all 13 of our hooks`);
    expect(r.stdout).toContain('ok    transport: shell: 13 hooks');

    const json = await cli(['doctor', '--hermes', tree, '--json'], env);
    const parsed = JSON.parse(json.stdout) as { status: number; checks: { level: string; what: string }[] };
    expect([json.code, parsed.status, parsed.checks.filter((c) => c.level === 'fail')]).toEqual([0, 0, []]);

    const dead = await freePort();
    const otlp = await cli(['doctor', '--hermes', tree], { ...env, OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${dead}` });
    expect(otlp.code).toBe(0);
    expect(checkLines(otlp.stdout, /otlp endpoint:/)).toEqual([
      expect.stringMatching(
        new RegExp(`^warn {2}otlp endpoint: 127\\.0\\.0\\.1:${dead} \\(OTEL_EXPORTER_OTLP_ENDPOINT\\) does not accept a connection \\(ECONNREFUSED\\)`),
      ),
      '      fix: start the collector there (e.g. docker compose up -d in the checkout), or correct OTEL_EXPORTER_OTLP_ENDPOINT',
    ]);
  });
});
