import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { ourOutbound, ourShellEntries } from '../config-entries.js';
import { isPluginEnabled } from '../config-plugin.js';
import { PLUGIN_CONFIG, pluginDir, pluginState } from '../plugin-copy.js';
import { shlexSplit } from '../shell-words.js';
import { defaultStateDir } from '../shim-target.js';
import type { Endpoint } from './daemon-probe.js';

/** What install left in a HERMES_HOME: our shell hooks, our webhook entry, the plugin, read from config.yaml and the plugin's own file. */
export interface Registration {
  readonly configFound: boolean;
  readonly shell: readonly { event: string; command: string }[];
  readonly webhookUrls: readonly string[];
  /** plugins.enabled lists hermes-aep */
  readonly pluginEnabled: boolean;
  /** what is at plugins/hermes-aep/ */
  readonly pluginFiles: 'absent' | 'ours' | 'foreign';
  /** the plugin's recorded shim arguments (hermes-aep.json) */
  readonly pluginArgs: readonly string[] | undefined;
}

export type Transport = 'shell' | 'plugin' | 'webhook' | 'none';

export function transportOf(r: Registration): Transport {
  if (r.webhookUrls.length > 0) return 'webhook';
  if (r.pluginEnabled) return 'plugin';
  if (r.shell.length > 0) return 'shell';
  return 'none';
}

/** A registered shell command taken apart: its runtime, its script, and where it sends hooks. */
export interface ShellCommand {
  readonly command: string;
  readonly node: string;
  readonly script: string;
  readonly target: Endpoint;
  readonly stateDir: string;
}

/** Where shim arguments (`--state-dir`, `--socket`, `--url`) send hooks, as the shim reads them (Hermes's environment aside). */
export function targetOfArgs(args: readonly string[]): { target: Endpoint; stateDir: string } {
  let stateDir: string | undefined;
  let target: Endpoint | undefined;
  for (let i = 0; i < args.length; i++) {
    const [name, inline] = args[i]!.includes('=') ? (args[i]!.split(/=(.*)/s, 2) as [string, string]) : [args[i]!, undefined];
    const value = inline ?? args[i + 1];
    if (!['--state-dir', '--socket', '--url'].includes(name) || value === undefined) continue;
    if (inline === undefined) i++;
    if (name === '--state-dir') stateDir = value;
    else target = name === '--socket' ? { socket: value } : { url: value };
  }
  const dir = stateDir ?? defaultStateDir();
  return { target: target ?? { socket: path.join(dir, 'hook.sock') }, stateDir: dir };
}

export function parseCommand(command: string): ShellCommand | undefined {
  const argv = shlexSplit(command.trim());
  if (!argv || argv.length < 2) return undefined;
  const [node, script, ...rest] = argv as [string, string, ...string[]];
  // the older `<node> <checkout>/dist/src/cli.js hook` form carries no target options
  return { command, node, script, ...targetOfArgs(script.endsWith('cli.js') ? [] : rest) };
}

/** The same daemon: the same socket file, or the same host and port. */
export function sameEndpoint(a: Endpoint, b: Endpoint): boolean {
  if ('socket' in a || 'socket' in b) return 'socket' in a && 'socket' in b && path.resolve(a.socket) === path.resolve(b.socket);
  try {
    const x = new URL(a.url);
    const y = new URL(b.url);
    const norm = (h: string) => (h === 'localhost' ? '127.0.0.1' : h);
    return norm(x.hostname) === norm(y.hostname) && (x.port || '80') === (y.port || '80');
  } catch {
    return false;
  }
}

export async function readRegistration(home: string): Promise<Registration> {
  let text: string | undefined;
  try {
    text = await readFile(path.join(home, 'config.yaml'), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const pluginFiles = await pluginState(home);
  let pluginArgs: string[] | undefined;
  if (pluginFiles === 'ours') {
    try {
      const conf = JSON.parse(await readFile(path.join(pluginDir(home), PLUGIN_CONFIG), 'utf8')) as { args?: unknown };
      pluginArgs = Array.isArray(conf.args) ? conf.args.map(String) : [];
    } catch {
      pluginArgs = undefined;
    }
  }
  if (text === undefined) return { configFound: false, shell: [], webhookUrls: [], pluginEnabled: false, pluginFiles, pluginArgs };
  return {
    configFound: true,
    shell: ourShellEntries(text),
    webhookUrls: ourOutbound(text).map((o) => String(o.item.get('url'))),
    pluginEnabled: isPluginEnabled(text),
    pluginFiles,
    pluginArgs,
  };
}
