import { stat, statfs } from 'node:fs/promises';
import path from 'node:path';
import { ConfigError, type ConfigProblem } from './read-env.js';

/**
 * Linux kernel pseudo-filesystems (statfs f_type): nothing the daemon keeps
 * belongs there, and a recursive mkdir where the kernel answers ENOENT for a
 * directory that cannot be made (procfs) never returns on Node 20 or 24.
 */
const PSEUDO_FS = new Map<number, string>([
  [0x9fa0, 'proc'],
  [0x62656572, 'sysfs'],
  [0x27e0eb, 'cgroup'],
  [0x63677270, 'cgroup2'],
  [0x64626720, 'debugfs'],
  [0x74726163, 'tracefs'],
  [0x73636673, 'securityfs'],
  [0x1cd1, 'devpts'],
  [0xcafe4a11, 'bpf'],
  [0x62656570, 'configfs'],
  [0x6165676c, 'pstore'],
  [0xde5e81e4, 'efivarfs'],
  [0x42494e4d, 'binfmt_misc'],
]);

/** How long the checks of all paths together may take (a hung network mount must not hang the start). */
export const PATH_CHECK_MS = 5_000;

/** the nearest part of `dir` that exists (dir itself, or an ancestor); undefined when the walk cannot tell (EACCES...) */
async function nearestExisting(dir: string): Promise<{ at: string; isDir: boolean } | undefined> {
  for (let at = dir; ; at = path.dirname(at)) {
    try {
      return { at, isDir: (await stat(at)).isDirectory() };
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if ((code !== 'ENOENT' && code !== 'ENOTDIR') || at === path.dirname(at)) return undefined;
    }
  }
}

/** What is wrong with `dir` as a place for the daemon's files, or undefined (permissions and space are left to the writers). */
async function problemOf(dir: string): Promise<string | undefined> {
  const found = await nearestExisting(dir);
  if (!found) return undefined;
  if (!found.isDir) return found.at === dir ? 'a directory (this is a file)' : 'a path whose every part is a directory (one is a file)';
  if (process.platform !== 'linux') return undefined;
  const fs = PSEUDO_FS.get(
    await statfs(found.at).then(
      (s) => s.type,
      () => 0,
    ),
  );
  return fs ? `a directory on a disk, not on the kernel's ${fs} pseudo-filesystem` : undefined;
}

const inside = (dir: string, parent: string) => dir === parent || dir.startsWith(parent.endsWith(path.sep) ? parent : parent + path.sep);

/**
 * Check the directories the settings name, before anything is created in
 * them, within PATH_CHECK_MS. A directory named before, or inside one named
 * before, is left to that check (the default socket is AEP_STATE_DIR's).
 */
export async function checkDirectories(
  dirs: readonly (readonly [variable: string, dir: string])[],
  { timeoutMs = PATH_CHECK_MS, probe = problemOf }: { timeoutMs?: number; probe?: (dir: string) => Promise<string | undefined> } = {},
): Promise<void> {
  const pending = new Set<string>();
  const checks = dirs
    .filter(([, d], i) => !dirs.slice(0, i).some(([, earlier]) => inside(d, earlier)))
    .map(async ([variable, d]): Promise<ConfigProblem | undefined> => {
      pending.add(variable);
      const rule = await probe(d);
      pending.delete(variable);
      return rule === undefined ? undefined : { variable, rule };
    });
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<ConfigProblem[]>((resolve) => {
    timer = setTimeout(
      () => resolve([...pending].map((variable) => ({ variable, rule: `a path the file system answers for within ${timeoutMs} ms` }))),
      timeoutMs,
    );
  });
  const checked = Promise.all(checks).then((all) => all.filter((p) => p !== undefined));
  const problems = await Promise.race([checked, late]).finally(() => clearTimeout(timer));
  if (problems.length > 0) throw new ConfigError(problems);
}
