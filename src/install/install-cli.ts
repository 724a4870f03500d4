import { lstat, mkdir, open, readFile, realpath, rename, stat, unlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { REGISTERED_HOOKS } from '../hermes/envelope.js';
import { addApprovals, removeApprovals } from './allowlist.js';
import { addHooks, isOurCommand, MARK, ourCommands, removeHooks, shimCommand } from './hermes-config.js';
import { ensureHookToken } from './hook-token.js';
import { pythonNowIso } from './py-time.js';
import { shlexSplit } from './shell-words.js';
import { placeShim, shimDir } from './shim-copy.js';
import { resolveTarget, type TargetOptions } from './shim-target.js';
import { packageVersion } from './version.js';

export interface InstallOptions extends TargetOptions {
  readonly dryRun: boolean;
  readonly timeout: number;
  readonly hermesHome?: string | undefined;
}

export interface UninstallOptions {
  readonly dryRun: boolean;
  readonly hermesHome?: string | undefined;
}

function hermesHome(opt: string | undefined): string {
  const h = opt ?? process.env.HERMES_HOME;
  if (h) return path.resolve(h === '~' ? os.homedir() : h.startsWith('~/') ? path.join(os.homedir(), h.slice(2)) : h);
  return path.join(os.homedir(), '.hermes');
}

/** Hermes's directory: it may be missing (install creates it), but not something else. */
async function checkHome(home: string): Promise<boolean> {
  try {
    const st = await stat(home);
    if (!st.isDirectory()) throw new Error(`HERMES_HOME ${home} is not a directory`);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}

/** The file's text, undefined when it does not exist; bytes that are not UTF-8 are refused (they could not be given back). */
async function readText(file: string, name: string): Promise<string | undefined> {
  let buf: Buffer;
  try {
    buf = await readFile(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  const text = buf.toString('utf8');
  if (!Buffer.from(text, 'utf8').equals(buf)) throw new Error(`${name} is not UTF-8 text; leaving it untouched`);
  return text;
}

/** Write through a symlinked file (dotfile managers), not over the link. */
async function realTarget(file: string): Promise<string> {
  try {
    return await realpath(file);
  } catch {
    return file;
  }
}

/** Temp file + fsync + rename, keeping the original's mode (new files 0600: config.yaml holds API keys). */
async function atomicWrite(file: string, text: string): Promise<void> {
  let mode = 0o600;
  try {
    mode = (await stat(file)).mode & 0o777;
  } catch {
    /* new file */
  }
  const tmp = `${file}.hermes-aep.${process.pid}.tmp`;
  const fh = await open(tmp, 'w', mode);
  try {
    await fh.writeFile(text);
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(tmp, file);
}

/** A file install created and uninstall emptied: remove it (through no symlink: then it is emptied instead). */
async function removeCreated(file: string): Promise<void> {
  if ((await lstat(file)).isSymbolicLink()) await atomicWrite(await realTarget(file), '');
  else await unlink(file);
}

/** The report goes out after the work is done; a reader that went away (`| head`) loses only the report. */
function print(lines: readonly string[]): Promise<void> {
  return new Promise((resolve) => {
    process.stdout.once('error', () => resolve());
    process.stdout.write(`${lines.join('\n')}\n`, () => resolve());
  });
}

/** One report line per kind of change: `hooks.<event>: add …` × 12 → `hooks: add … for <events>`. */
function summarize(changes: readonly string[]): string[] {
  const groups = new Map<string, string[]>();
  for (const c of changes) {
    const m = /^(hooks)\.([^:]+): (add|refresh|remove) ([^(]*?)\s*(\(.*\))?$/.exec(c) ?? /^(allowlist): (approve) ([^\s]+)()$/.exec(c);
    const [head, subject] = m ? (m[1] === 'hooks' ? [`${m[1]}: ${m[3]}${m[3] === 'remove' ? ` ${m[4]}` : ''}`, m[2]!] : [`${m[1]}: ${m[2]}`, m[3]!]) : [c, ''];
    groups.set(head, [...(groups.get(head) ?? []), subject]);
  }
  return [...groups].map(([head, subjects]) => {
    const s = subjects.filter(Boolean);
    return s.length === 0 ? `  ${head}` : `  ${head} (${s.length === 1 ? s[0] : `${s.length} events: ${s.join(', ')}`})`;
  });
}

/** `hermes-aep install` */
export async function runInstall(opts: InstallOptions): Promise<void> {
  const home = hermesHome(opts.hermesHome);
  const target = resolveTarget(opts);
  const homeExisted = await checkHome(home);
  const configFile = path.join(home, 'config.yaml');
  const allowFile = path.join(home, 'shell-hooks-allowlist.json');
  const configText = await readText(await realTarget(configFile), 'config.yaml');
  const allowText = await readText(await realTarget(allowFile), 'shell-hooks-allowlist.json');

  const version = packageVersion();
  const source = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'shim', 'hook.cjs');
  const shimPath = path.join(shimDir(target.stateDir, version), 'hook.cjs');
  const command = shimCommand(process.execPath, shimPath, target.args);
  const entry = { command, timeout: opts.timeout };

  // every refusal comes before anything is written
  const cfg = addHooks(configText ?? '', entry, REGISTERED_HOOKS, { create: configText === undefined });
  addApprovals(allowText, command, pythonNowIso(), null);

  const report = [
    `install${opts.dryRun ? ' (dry run: nothing is written)' : ''}: HERMES_HOME=${home}${homeExisted ? '' : ` (does not exist: ${opts.dryRun ? 'would be created' : 'created'}, 0700)`}`,
  ];
  if (!opts.dryRun && !homeExisted) await mkdir(home, { recursive: true, mode: 0o700 });
  const placed = await placeShim(source, target.stateDir, version, { dryRun: opts.dryRun });
  report.push(
    placed.action === 'kept'
      ? `  shim: ${placed.path} (version ${version}, already in place)`
      : `  shim: ${placed.action === 'copied' ? 'copy' : 'replace (same version, different bytes)'} ${source} → ${placed.path} (read-only, directory 0700)`,
  );
  report.push(`  target: ${target.summary}`);
  const token = await ensureHookToken(target.stateDir, { dryRun: opts.dryRun });
  report.push(
    `  token: ${token.path} ${token.action === 'kept' ? '(exists, kept)' : `(${opts.dryRun ? 'would be created' : 'created'}: 64 hex characters, 0600)`}`,
  );

  const allow = addApprovals(allowText, command, pythonNowIso(), placed.mtimeIso);
  if (configText === undefined) report.push(`  config.yaml: does not exist: created (uninstall deletes it again when nothing else is in it)`);
  report.push(...summarize([...cfg.changes, ...allow.changes]));
  if (cfg.changed) report.push(`    command: ${command}`, `    timeout: ${opts.timeout}`);
  if (!cfg.changed && !allow.changed) report.push('  config.yaml and the allowlist already hold exactly these entries: nothing to change');

  if (opts.dryRun) {
    // only what this tool writes: the rest of config.yaml can hold API keys
    if (cfg.changed) {
      report.push('', `--- each of the ${REGISTERED_HOOKS.length} events under hooks: in ${configFile} gets (every other line stays as it is):`);
      report.push(`    - command: ${command}  ${MARK}`, `      timeout: ${opts.timeout}  ${MARK}`);
    }
    await print(report);
    return;
  }
  if (cfg.changed) await atomicWrite(await realTarget(configFile), cfg.text);
  if (allow.changed) await atomicWrite(await realTarget(allowFile), allow.text);
  await print(report);
}

/** The copied shims our removed entries pointed at: uninstall leaves them (see README) and says where. */
function shimDirsOf(commands: readonly string[]): string[] {
  const dirs = new Set<string>();
  for (const c of commands) {
    const script = shlexSplit(c)?.[1];
    if (script && /\/shim\/[^/]+\/hook\.cjs$/.test(script)) dirs.add(path.dirname(script));
  }
  return [...dirs];
}

/** `hermes-aep uninstall` */
export async function runUninstall(opts: UninstallOptions): Promise<void> {
  const home = hermesHome(opts.hermesHome);
  if (!(await checkHome(home))) {
    await print([`uninstall: HERMES_HOME=${home} does not exist: nothing to change`]);
    return;
  }
  const configFile = path.join(home, 'config.yaml');
  const allowFile = path.join(home, 'shell-hooks-allowlist.json');
  const configText = await readText(await realTarget(configFile), 'config.yaml');
  const allowText = await readText(await realTarget(allowFile), 'shell-hooks-allowlist.json');
  const cfg = configText === undefined ? undefined : removeHooks(configText);
  const allow = removeApprovals(allowText);
  const commands = [...(configText === undefined ? [] : ourCommands(configText)), ...ourApprovalCommands(allowText)];

  const report = [`uninstall${opts.dryRun ? ' (dry run: nothing is written)' : ''}: HERMES_HOME=${home}`];
  report.push(...summarize([...(cfg?.changes ?? []), ...allow.changes]));
  if (cfg?.deleteFile) report.push('  config.yaml: install created it and nothing else is in it: delete');
  if (!cfg?.changed && !allow.changed) report.push('  no hermes-aep entries: nothing to change');
  for (const dir of shimDirsOf(commands)) {
    report.push(`  left in place: ${dir} (a Hermes started before may still run it, another HERMES_HOME may use it; delete it when neither does)`);
  }
  if (!opts.dryRun) {
    if (cfg?.deleteFile) await removeCreated(configFile);
    else if (cfg?.changed) await atomicWrite(await realTarget(configFile), cfg.text);
    if (allow.deleteFile) await removeCreated(allowFile);
    else if (allow.changed) await atomicWrite(await realTarget(allowFile), allow.text);
  }
  await print(report);
}

function ourApprovalCommands(text: string | undefined): string[] {
  if (!text || text.trim() === '') return [];
  try {
    const approvals = (JSON.parse(text.replace(/^\uFEFF/, '')) as { approvals?: unknown }).approvals;
    return Array.isArray(approvals) ? approvals.map((a) => (a as { command?: unknown })?.command).filter((c): c is string => isOurCommand(c)) : [];
  } catch {
    return [];
  }
}
