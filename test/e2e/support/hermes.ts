import { execFile, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { CLI } from '../../support/paths.js';
import { tempDir, waitFor } from '../../support/processes.js';
import { hermesBinEnv, PINNED_HERMES_VERSION, type HermesVersion } from './hermes-versions.js';

const run = promisify(execFile);

/** The `hermes` binary of one provisioned release (the e2e globalSetup installs each in E2E_HERMES_VERSIONS). */
export function hermesBin(version: HermesVersion = PINNED_HERMES_VERSION): string {
  const name = hermesBinEnv(version);
  const bin = process.env[name];
  if (!bin) throw new Error(`${name} is not set: the e2e globalSetup provisions Hermes ${version} (scripts/provision-hermes.sh)`);
  return bin;
}

export interface HermesHome {
  /** the Hermes release this home is driven with, and its binary */
  readonly version: HermesVersion;
  readonly bin: string;
  readonly home: string;
  readonly cwd: string;
  /** the environment every Hermes process of this home runs with */
  readonly env: NodeJS.ProcessEnv;
}

/**
 * A throwaway HERMES_HOME wired to a fake model and to the daemon under test:
 * the offline config (custom provider on loopback, no lazy installs, no tirith,
 * no model catalog), the seeds that keep Hermes off the network (model
 * metadata, models.dev cache, update check), and the hooks written by the
 * project's OWN `install` command (hooks block + consent allowlist), so no
 * --accept-hooks is used. Proxies point at a closed loopback port so any
 * network attempt we missed fails at once instead of leaving the machine.
 */
export async function makeHermesHome(opts: {
  modelUrl: string;
  /** where the installed shim finds the daemon: install records it in the registered command */
  hookEnv: Record<string, string>;
  extraYaml?: string;
  version?: HermesVersion;
  /** false: leave the hooks to the caller (the fixture recorder writes its own, in extraYaml) */
  install?: boolean;
  /** more `install` options, e.g. `['--transport', 'plugin']` */
  installArgs?: readonly string[];
}): Promise<HermesHome> {
  const version = opts.version ?? PINNED_HERMES_VERSION;
  const bin = hermesBin(version);
  const root = tempDir('hermes-aep-e2e-home-');
  const home = path.join(root, 'hermes');
  const cwd = path.join(root, 'project');
  mkdirSync(path.join(home, 'cache'), { recursive: true });
  mkdirSync(cwd, { recursive: true });
  writeFileSync(
    path.join(home, 'config.yaml'),
    [
      '# written by the hermes-aep e2e harness',
      'model:',
      '  provider: custom',
      `  base_url: ${opts.modelUrl}`,
      '  default: fake-model',
      '  api_key: sk-fake-local',
      '  context_length: 65536',
      'security:',
      '  allow_lazy_installs: false',
      '  tirith_enabled: false',
      'model_catalog:',
      '  enabled: false',
      opts.extraYaml ?? '',
      '',
    ].join('\n'),
  );
  writeFileSync(
    path.join(home, 'cache', 'openrouter_model_metadata.json'),
    JSON.stringify({ 'fake-model': { context_length: 65536, max_completion_tokens: 4096, name: 'fake-model', pricing: {} } }),
  );
  writeFileSync(path.join(home, 'models_dev_cache.json'), JSON.stringify({ custom: { id: 'custom', name: 'Custom', models: {} } }));
  writeFileSync(path.join(home, '.update_check'), JSON.stringify({ ts: Math.floor(Date.now() / 1000), behind: 0, rev: null, ver: version }));
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: root,
    LANG: 'C.UTF-8',
    TERM: 'xterm-256color',
    HERMES_HOME: home,
    HERMES_DISABLE_LAZY_INSTALLS: '1',
    HTTP_PROXY: 'http://127.0.0.1:9',
    HTTPS_PROXY: 'http://127.0.0.1:9',
    NO_PROXY: '127.0.0.1,localhost',
    no_proxy: '127.0.0.1,localhost',
    // where the installed shim finds the daemon (its socket under this state dir)
    ...opts.hookEnv,
  };
  // the shell transport unless the caller names one: without --transport, install picks from the Hermes it finds
  const args = opts.installArgs ?? [];
  const transport = args.includes('--transport') ? [] : ['--transport', 'shell'];
  if (opts.install !== false)
    await run(process.execPath, [CLI, 'install', '--timeout', '20', ...transport, ...args], {
      env: { ...process.env, ...opts.hookEnv, HERMES_HOME: home },
    });
  return { version, bin, home, cwd, env };
}

export interface HermesRun {
  readonly stdout: string;
  readonly stderr: string;
  readonly code: number;
  readonly ms: number;
}

/** Run a non-interactive Hermes command (`-z`, `chat -q`, `hooks test`) to completion. */
export async function runHermes(h: HermesHome, args: string[], timeoutMs = 120_000): Promise<HermesRun> {
  const t0 = Date.now();
  try {
    const { stdout, stderr } = await run(h.bin, args, { env: h.env, cwd: h.cwd, timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 });
    return { stdout, stderr, code: 0, ms: Date.now() - t0 };
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; code?: number };
    return { stdout: e.stdout ?? '', stderr: e.stderr ?? '', code: typeof e.code === 'number' ? e.code : -1, ms: Date.now() - t0 };
  }
}

/**
 * The interactive CLI in a tmux pane (its own server socket, so nothing else
 * the machine runs in tmux is touched): type, read the screen, wait for text.
 */
export class HermesTty {
  private readonly socket = `hermes-aep-e2e-${process.pid}-${Date.now()}`;
  private readonly name = 'hermes';

  constructor(private readonly h: HermesHome) {}

  private tmux(...args: string[]): string {
    const r = spawnSync('tmux', ['-L', this.socket, ...args], { encoding: 'utf8' });
    if (r.status !== 0 && args[0] !== 'kill-server' && args[0] !== 'has-session') throw new Error(`tmux ${args[0]} failed: ${r.stderr}`);
    return r.stdout;
  }

  start(): void {
    const envArgs = Object.entries(this.h.env)
      .filter((e): e is [string, string] => typeof e[1] === 'string')
      .map(([k, v]) => `${k}=${v}`);
    this.tmux('new-session', '-d', '-s', this.name, '-x', '160', '-y', '50', '-c', this.h.cwd, 'env', '-i', ...envArgs, this.h.bin);
  }

  screen(): string {
    return this.tmux('capture-pane', '-p', '-t', this.name);
  }

  alive(): boolean {
    return spawnSync('tmux', ['-L', this.socket, 'has-session', '-t', this.name]).status === 0;
  }

  keys(...keys: string[]): void {
    this.tmux('send-keys', '-t', this.name, ...keys);
  }

  /** Type a line of text literally, then Enter. */
  line(text: string): void {
    this.tmux('send-keys', '-t', this.name, '-l', text);
    this.tmux('send-keys', '-t', this.name, 'Enter');
  }

  waitScreen(what: string | RegExp, ms = 60_000): Promise<string> {
    return waitFor(
      `screen to show ${String(what)}`,
      () => {
        const s = this.screen();
        return (typeof what === 'string' ? s.includes(what) : what.test(s)) ? s : undefined;
      },
      ms,
      100,
    );
  }

  stop(): void {
    this.tmux('kill-server');
  }
}
