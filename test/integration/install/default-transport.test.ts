// `install` without --transport (issue 25 item 3) through the built CLI: it locates the installed Hermes as doctor does
// (--hermes, the `hermes` on PATH, ~/.hermes/hermes-agent) and picks webhook (outbound webhooks and a TCP target), else
// plugin (a Hermes is found), else shell (none is), saying which and why in one line, in --dry-run too. An explicit
// --transport always wins. The Hermes trees are stand-ins (test/support/hermes-tree.ts): only the files install reads.
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { hermes019Tree, hermes021Tree, hermesScript } from '../../support/hermes-tree.js';
import { CLI } from '../../support/paths.js';
import { tempDir } from '../../support/processes.js';

const run = promisify(execFile);
const PORT = 18394;

interface Outcome {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** A HERMES_HOME, a state dir and an environment with no Hermes to find unless `extraPath` leads to one. */
function world(extra: Record<string, string> = {}, extraPath?: string): { home: string; env: NodeJS.ProcessEnv } {
  const home = tempDir();
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: tempDir(), HERMES_HOME: home, AEP_STATE_DIR: path.join(tempDir(), 'state') };
  for (const k of ['AEP_SOCKET', 'AEP_PORT', 'AEP_HOST', 'AEP_HOOK_URL', 'AEP_HERMES_CONTROL', 'AEP_INSTRUCT', 'AEP_ATTENTION_TIMEOUT_MS']) delete env[k];
  env.PATH = [extraPath, path.dirname(process.execPath)].filter(Boolean).join(path.delimiter);
  return { home, env: { ...env, ...extra } };
}

async function install(args: readonly string[], env: NodeJS.ProcessEnv): Promise<Outcome> {
  try {
    const r = await run(process.execPath, [CLI, 'install', ...args], { env });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

const config = (home: string) => parse(readFileSync(path.join(home, 'config.yaml'), 'utf8')) as Record<string, any>;
const choiceLine = (stdout: string) => stdout.split('\n').filter((l) => l.startsWith('  transport: '));

/** What is installed in `home`: the plugin enabled, our outbound webhook, our shell hooks. */
function installed(home: string): { plugin: boolean; webhook: boolean; shellHooks: number } {
  const c = config(home);
  const hooks = (c.hooks ?? {}) as Record<string, unknown>;
  return {
    plugin: ((c.plugins?.enabled ?? []) as string[]).includes('hermes-aep') && existsSync(path.join(home, 'plugins', 'hermes-aep')),
    webhook: ((hooks.outbound ?? []) as { name?: string }[]).some((o) => o.name === 'hermes-aep'),
    shellHooks: Object.entries(hooks).filter(([k, v]) => k !== 'outbound' && Array.isArray(v)).length,
  };
}

describe('install without --transport picks from the installed Hermes', () => {
  it('a 0.19-like Hermes (no outbound webhooks), given by --hermes: plugin, one line saying why; the dry run says the same and writes nothing', async () => {
    const tree = hermes019Tree();
    const { home, env } = world();
    const dry = await install(['--dry-run', '--hermes', tree], env);
    expect([dry.code, dry.stderr]).toEqual([0, '']);
    expect(choiceLine(dry.stdout)).toEqual([
      expect.stringMatching(
        new RegExp(`^  transport: plugin \\(default: the Hermes at ${tree} \\(0\\.19\\.0, found via --hermes ${tree}\\) has no outbound webhooks`),
      ),
    ]);
    expect(dry.stdout).toContain('install --transport plugin (dry run: nothing is written)');
    expect(existsSync(path.join(home, 'config.yaml'))).toBe(false);
    const r = await install(['--hermes', tree], env);
    console.log(r.stdout);
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(choiceLine(r.stdout)).toEqual(choiceLine(dry.stdout));
    expect(installed(home)).toEqual({ plugin: true, webhook: false, shellHooks: 0 });
  });

  it('the same Hermes found as the `hermes` on PATH (no --hermes): plugin', async () => {
    const tree = hermes019Tree();
    const { home, env } = world({}, hermesScript(tree));
    const r = await install([], env);
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(choiceLine(r.stdout)).toEqual([expect.stringContaining(`transport: plugin (default: the Hermes at ${tree} (0.19.0, found via hermes on PATH (`)]);
    expect(installed(home)).toEqual({ plugin: true, webhook: false, shellHooks: 0 });
  });

  it('a 0.21-like Hermes (outbound webhooks) and a TCP target: webhook, by --url and by AEP_PORT', async () => {
    const tree = hermes021Tree();
    for (const [args, extra] of [
      [['--url', `http://127.0.0.1:${PORT}`], {}],
      [[], { AEP_PORT: String(PORT) }],
    ] as const) {
      const { home, env } = world(extra);
      const r = await install(['--hermes', tree, ...args], env);
      expect([r.code, r.stderr], JSON.stringify(extra)).toEqual([0, '']);
      expect(choiceLine(r.stdout)).toEqual([expect.stringContaining('transport: webhook (default: the Hermes at ')]);
      expect(choiceLine(r.stdout)[0]).toContain('(0.21.3, found via --hermes');
      expect(choiceLine(r.stdout)[0]).toContain('has outbound webhooks and the daemon is on TCP');
      expect(r.stdout).toContain('install --transport webhook: HERMES_HOME=');
      expect(installed(home)).toEqual({ plugin: false, webhook: true, shellHooks: 0 });
      expect(config(home).hooks.outbound[0].url).toBe(`http://127.0.0.1:${PORT}/webhook`);
    }
  });

  it('a 0.21-like Hermes with no TCP target (the default unix socket, or --socket): plugin, and the line says the webhook needs TCP', async () => {
    const tree = hermes021Tree();
    for (const args of [[], ['--socket', path.join(tempDir(), 'd.sock')]]) {
      const { home, env } = world();
      const r = await install(['--hermes', tree, ...args], env);
      expect([r.code, r.stderr], args.join(' ')).toEqual([0, '']);
      expect(choiceLine(r.stdout)).toEqual([expect.stringContaining('transport: plugin (default: the Hermes at ')]);
      expect(choiceLine(r.stdout)[0]).toContain('has outbound webhooks, but the webhook transport needs a TCP target: ');
      expect(installed(home)).toEqual({ plugin: true, webhook: false, shellHooks: 0 });
    }
  });

  it('no Hermes found (none on PATH, no ~/.hermes/hermes-agent): shell as before, and the line says why', async () => {
    const { home, env } = world();
    for (const args of [['--dry-run'], []]) {
      const r = await install(args, env);
      expect([r.code, r.stderr]).toEqual([0, '']);
      expect(choiceLine(r.stdout)).toEqual([
        expect.stringMatching(
          /^ {2}transport: shell \(default: no Hermes found: no hermes on PATH, none at .*; give its place with --hermes; --transport shell\|plugin\|webhook chooses another\)$/,
        ),
      ]);
    }
    expect(installed(home)).toEqual({ plugin: false, webhook: false, shellHooks: 13 });
  });

  it('an explicit --transport always wins, and prints no choice line', async () => {
    const t21 = hermes021Tree();
    const tcp = ['--url', `http://127.0.0.1:${PORT}`];
    for (const [transport, want] of [
      ['shell', { plugin: false, webhook: false, shellHooks: 13 }],
      ['plugin', { plugin: true, webhook: false, shellHooks: 0 }],
    ] as const) {
      const { home, env } = world({}, hermesScript(t21));
      const r = await install(['--transport', transport, ...tcp], env);
      expect([r.code, r.stderr], transport).toEqual([0, '']);
      expect(choiceLine(r.stdout)).toEqual([]);
      expect(installed(home), transport).toEqual(want);
    }
    // webhook asked of a Hermes without outbound webhooks is still refused, not turned into plugin
    const { home, env } = world();
    const r = await install(['--transport', 'webhook', '--hermes', hermes019Tree(), ...tcp], env);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('has no outbound webhooks');
    expect(existsSync(path.join(home, 'config.yaml'))).toBe(false);
  });
});
