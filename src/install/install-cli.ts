import { mkdir, readFile, realpath, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { stringify } from 'yaml';
import { REGISTERED_HOOKS } from '../hermes/envelope.js';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { addApprovals, removeApprovals } from './allowlist.js';
import { addHooks, removeHooks, shimCommand } from './hermes-config.js';

const DEFAULT_TIMEOUT_S = 10;

function hermesHome(): string {
  const h = process.env.HERMES_HOME;
  if (h) return path.resolve(h.startsWith('~') ? path.join(os.homedir(), h.slice(1)) : h);
  return path.join(os.homedir(), '.hermes');
}

async function readOr<T extends string | undefined>(file: string, fallback: T): Promise<string | T> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return fallback;
    throw err;
  }
}

/** Write via a temp file and rename, keeping the original's mode, so a crash never leaves half a config. */
async function atomicWrite(file: string, text: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  let mode = 0o600;
  try {
    mode = (await stat(file)).mode & 0o777;
  } catch {
    /* new file */
  }
  const tmp = `${file}.hermes-aep.${process.pid}.tmp`;
  await writeFile(tmp, text, { mode });
  await rename(tmp, file);
}

/** Write through a symlinked file (dotfile managers), not over the link. */
async function realTarget(file: string): Promise<string> {
  try {
    return await realpath(file);
  } catch {
    return file;
  }
}

/** Python's `datetime.isoformat()` with a Z, as Hermes writes `script_mtime_at_approval`. */
function isoZ(ms: number): string {
  return new Date(ms).toISOString().replace(/\.000Z$/, 'Z');
}

function parseArgs(args: readonly string[]): { dryRun: boolean; timeout: number } {
  let dryRun = false;
  let timeout = DEFAULT_TIMEOUT_S;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--dry-run' || a === '-n') dryRun = true;
    else if (a === '--timeout') {
      const n = Number(args[++i]);
      // Hermes kills the shim at this deadline; the shim's own (AEP_SHIM_TIMEOUT_MS, 5 s) must come first
      if (!Number.isInteger(n) || n < 6 || n > 300) throw new Error('--timeout takes whole seconds between 6 and 300 (above the shim\'s own 5 s deadline, within Hermes\'s 300 s clamp)');
      timeout = n;
    } else throw new Error(`unknown option ${a ?? ''}; usage: hermes-aep install|uninstall [--dry-run] [--timeout SECONDS]`);
  }
  return { dryRun, timeout };
}

/** `hermes-aep install|uninstall [--dry-run] [--timeout N]` */
export async function runInstall(cmd: 'install' | 'uninstall', args: readonly string[]): Promise<void> {
  const { dryRun, timeout } = parseArgs(args);
  const home = hermesHome();
  const configFile = path.join(home, 'config.yaml');
  const allowFile = path.join(home, 'shell-hooks-allowlist.json');
  const shimPath = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'shim', 'hook.cjs');
  const command = shimCommand(process.execPath, shimPath);
  const configText = await readOr(configFile, '');
  const allowText = await readOr(allowFile, undefined);

  const cfg = cmd === 'install' ? addHooks(configText, { command, timeout }) : removeHooks(configText);
  let mtime: string | null = null;
  try {
    mtime = isoZ((await stat(shimPath)).mtimeMs);
  } catch {
    mtime = null;
  }
  const allow = cmd === 'install' ? addApprovals(allowText, command, isoZ(Date.now()), mtime) : removeApprovals(allowText);

  const out = process.stdout;
  out.write(`${cmd}${dryRun ? ' (dry run)' : ''}: HERMES_HOME=${home}\n`);
  for (const c of [...cfg.changes, ...allow.changes]) out.write(`  ${c}\n`);
  if (!cfg.changed && !allow.changed) out.write('  nothing to change\n');
  if (dryRun) {
    // only what this tool writes: the rest of config.yaml can hold API keys
    if (cfg.changed && cmd === 'install') {
      const ours = Object.fromEntries(REGISTERED_HOOKS.map((e) => [e, [{ command, timeout }]]));
      out.write(`\n--- added under hooks: in ${configFile} (every other key, comment and hook kept)\n${stringify({ hooks: ours })}`);
    }
    return;
  }
  if (cfg.changed) await atomicWrite(await realTarget(configFile), cfg.text);
  if (allow.deleteFile) await unlink(allowFile);
  else if (allow.changed) await atomicWrite(await realTarget(allowFile), allow.text);
}
