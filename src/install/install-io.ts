import { lstat, open, readFile, realpath, rename, stat, unlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

// The file handling install and uninstall share: where Hermes lives, reading its files as exact text, atomic writes.

export function hermesHome(opt: string | undefined): string {
  const h = opt ?? process.env.HERMES_HOME;
  if (h) return path.resolve(h === '~' ? os.homedir() : h.startsWith('~/') ? path.join(os.homedir(), h.slice(2)) : h);
  return path.join(os.homedir(), '.hermes');
}

/** Hermes's directory: it may be missing (install creates it), but not something else. */
export async function checkHome(home: string): Promise<boolean> {
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
export async function readText(file: string, name: string): Promise<string | undefined> {
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
export async function realTarget(file: string): Promise<string> {
  try {
    return await realpath(file);
  } catch {
    return file;
  }
}

/** Temp file + fsync + rename, keeping the original's mode (new files 0600: config.yaml holds API keys). */
export async function atomicWrite(file: string, text: string | Buffer): Promise<void> {
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
export async function removeCreated(file: string): Promise<void> {
  if ((await lstat(file)).isSymbolicLink()) await atomicWrite(await realTarget(file), '');
  else await unlink(file);
}

/** The report goes out after the work is done; a reader that went away (`| head`) loses only the report. */
export function print(lines: readonly string[]): Promise<void> {
  return new Promise((resolve) => {
    process.stdout.once('error', () => resolve());
    process.stdout.write(`${lines.join('\n')}\n`, () => resolve());
  });
}

/** One report line per kind of change: `hooks.<event>: add …` × 12 → `hooks: add … for <events>`. */
export function summarize(changes: readonly string[]): string[] {
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

/** Hermes's two files install edits, read as exact text (undefined: missing), and whether HERMES_HOME exists. */
export interface HermesFiles {
  readonly home: string;
  readonly homeExisted: boolean;
  readonly configFile: string;
  readonly allowFile: string;
  readonly configText: string | undefined;
  readonly allowText: string | undefined;
}

export async function readHermesFiles(opt: string | undefined): Promise<HermesFiles> {
  const home = hermesHome(opt);
  const homeExisted = await checkHome(home);
  const configFile = path.join(home, 'config.yaml');
  const allowFile = path.join(home, 'shell-hooks-allowlist.json');
  const configText = await readText(await realTarget(configFile), 'config.yaml');
  const allowText = await readText(await realTarget(allowFile), 'shell-hooks-allowlist.json');
  return { home, homeExisted, configFile, allowFile, configText, allowText };
}
