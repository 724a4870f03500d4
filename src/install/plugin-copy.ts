import { mkdir, readdir, readFile, rm, rmdir, unlink } from 'node:fs/promises';
import path from 'node:path';
import { atomicWrite } from './install-io.js';
import { packageRoot } from './version.js';

/**
 * The plugin transport's files: `$HERMES_HOME/plugins/hermes-aep/` holds a copy of the package's
 * `plugin/hermes-aep/` (`plugin.yaml`, `__init__.py`) and `hermes-aep.json`, which says who wrote the directory,
 * the package version, and the shim arguments install resolved (`--state-dir`, `--socket`, `--url`, the gates: the
 * plugin reads them as the shim reads its command line), plus `--no-model-calls` when install was given it (the
 * plugin then leaves post_api_request out). Installing the same bytes again leaves the files alone.
 */
export const PLUGIN_FILES = ['plugin.yaml', '__init__.py'] as const;
export const PLUGIN_CONFIG = 'hermes-aep.json';

export interface PluginConfig {
  readonly installed_by: 'hermes-aep';
  readonly version: string;
  readonly args: readonly string[];
}

export function pluginDir(home: string): string {
  return path.join(home, 'plugins', 'hermes-aep');
}

export function pluginSource(): string {
  return path.join(packageRoot(), 'plugin', 'hermes-aep');
}

async function readIf(file: string): Promise<Buffer | undefined> {
  try {
    return await readFile(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined;
    throw err;
  }
}

/** What is at the plugin directory: nothing, ours (our config file in it), or something else (never touched). */
export async function pluginState(home: string): Promise<'absent' | 'ours' | 'foreign'> {
  const dir = pluginDir(home);
  const names = await readdir(dir).catch((err: unknown) => {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  });
  if (names === undefined) return 'absent';
  try {
    const conf = JSON.parse((await readIf(path.join(dir, PLUGIN_CONFIG)))?.toString('utf8') ?? '') as Partial<PluginConfig>;
    return conf.installed_by === 'hermes-aep' ? 'ours' : 'foreign';
  } catch {
    return 'foreign';
  }
}

/** Copy the plugin (files 0600, directory 0700), each file temp + fsync + rename; `kept` when every byte is already there. */
export async function placePlugin(
  home: string,
  conf: PluginConfig,
  opts: { dryRun?: boolean } = {},
): Promise<{ dir: string; action: 'kept' | 'copied' | 'replaced' }> {
  const dir = pluginDir(home);
  const state = await pluginState(home);
  if (state === 'foreign') throw new Error(`${dir} exists and was not written by hermes-aep (no ${PLUGIN_CONFIG} of ours in it); move it away first`);
  const src = pluginSource();
  const want = new Map<string, Buffer>();
  for (const f of PLUGIN_FILES) {
    const bytes = await readIf(path.join(src, f));
    if (!bytes) throw new Error(`the plugin's ${path.join(src, f)} is missing from this package`);
    want.set(f, bytes);
  }
  want.set(PLUGIN_CONFIG, Buffer.from(`${JSON.stringify(conf, null, 2)}\n`));
  const same = await Promise.all([...want].map(async ([f, b]) => (await readIf(path.join(dir, f)))?.equals(b) ?? false));
  if (same.every(Boolean)) return { dir, action: 'kept' };
  const action = state === 'ours' ? 'replaced' : 'copied';
  if (opts.dryRun) return { dir, action };
  await mkdir(dir, { recursive: true, mode: 0o700 });
  for (const [f, bytes] of want) await atomicWrite(path.join(dir, f), bytes);
  return { dir, action };
}

/**
 * Take our plugin directory away (uninstall, or `--transport shell`): our files and Python's `__pycache__`, then the
 * directory when nothing else is in it. A Hermes already running keeps the module it loaded until it restarts.
 * Leaving it would be unsafe: Hermes's config migration grandfathers every plugin directory into `plugins.enabled`.
 */
export async function removePlugin(home: string, opts: { dryRun?: boolean } = {}): Promise<'absent' | 'foreign' | 'removed' | 'kept-dir'> {
  const state = await pluginState(home);
  if (state !== 'ours') return state;
  if (opts.dryRun) return 'removed';
  const dir = pluginDir(home);
  // the config file last: until it goes, the directory still reads as ours
  for (const f of [...PLUGIN_FILES, PLUGIN_CONFIG]) await unlink(path.join(dir, f)).catch(() => undefined);
  await rm(path.join(dir, '__pycache__'), { recursive: true, force: true });
  try {
    await rmdir(dir);
  } catch {
    return 'kept-dir';
  }
  // an empty plugins/ means nothing to Hermes: install made it, or it held only ours
  await rmdir(path.dirname(dir)).catch(() => undefined);
  return 'removed';
}
