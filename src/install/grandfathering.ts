import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse } from 'yaml';
import { load } from './yaml-source.js';

/**
 * Hermes's config migration (hermes_cli/config.py `migrate_config`, its step 20 → 21, in 0.18.2 and 0.19.0; run by
 * `hermes update`, `hermes config migrate`, `hermes doctor --fix`, profile set-up) writes a missing `plugins.enabled`
 * listing every user plugin under `$HERMES_HOME/plugins/` (a directory with a plugin.yaml or plugin.yml; its manifest's
 * `name`, else the directory's) not in `plugins.disabled`, when config.yaml's `_config_version` is under 21 (or
 * missing). Once install adds `plugins.enabled: [hermes-aep]` the migration leaves the list alone: the plugins it
 * would have enabled, as `dir` or `dir (name)`.
 */
export async function lostToGrandfathering(home: string, configText: string | undefined): Promise<string[]> {
  if (configText === undefined) return []; // no config.yaml: Hermes takes it as current, and migrates nothing
  const cfg: unknown = load(configText).toJS();
  const raw = cfg && typeof cfg === 'object' ? (cfg as Record<string, unknown>) : {};
  const plugins = raw.plugins && typeof raw.plugins === 'object' && !Array.isArray(raw.plugins) ? (raw.plugins as Record<string, unknown>) : {};
  if (configVersion(raw._config_version) >= 21 || 'enabled' in plugins) return [];
  const disabled = new Set(Array.isArray(plugins.disabled) ? plugins.disabled : []);
  const dir = path.join(home, 'plugins');
  const entries = await readdir(dir).catch(() => [] as string[]);
  const found: string[] = [];
  // sorted as Python sorts paths; a file (or anything unreadable) has no manifest in it
  for (const e of entries.filter((x) => x !== 'hermes-aep').sort((a, b) => (a < b ? -1 : 1))) {
    const read = (f: string) => readFile(path.join(dir, e, f), 'utf8');
    const text = await read('plugin.yaml').catch(() => read('plugin.yml').catch(() => undefined));
    if (text === undefined) continue;
    const name = manifestName(text) || e;
    if (!disabled.has(name)) found.push(name === e ? e : `${e} (${name})`);
  }
  return found;
}

/** Python's `int(value)` as `_coerce_config_version` uses it: anything else (a bool, a float string) is 0. */
function configVersion(v: unknown): number {
  if (typeof v === 'number') return Number.isFinite(v) ? Math.max(Math.trunc(v), 0) : 0;
  return typeof v === 'string' && /^\s*[+-]?\d+\s*$/.test(v) ? Math.max(parseInt(v, 10), 0) : 0;
}

function manifestName(text: string): string | undefined {
  try {
    const m: unknown = parse(text, { version: '1.1' });
    const name = m && typeof m === 'object' ? (m as { name?: unknown }).name : undefined;
    return typeof name === 'string' ? name : undefined;
  } catch {
    return undefined;
  }
}
