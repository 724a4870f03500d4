import { closeSync, constants, fstatSync, ftruncateSync, lstatSync, mkdirSync, openSync, statSync, type Stats } from 'node:fs';
import { lstat, mkdir, open, stat, type FileHandle } from 'node:fs/promises';

/**
 * The daemon's directories and files are its user's alone: a directory
 * another user owns or may write in could hold a symlink or a file planted
 * there (the daemon would append a session's events to whatever it points at,
 * or write where the other user reads). So every directory the daemon makes or
 * writes in is made 0700 and checked (ours, not group- or world-writable), and
 * every file it writes there is opened without following a symlink and checked
 * the same way before the first byte goes in. Loose modes are refused, not
 * fixed: a directory that was writable by others may already hold what they
 * planted, and only its owner can tell.
 */

// O_NOFOLLOW is 0 where the platform has none (Windows, which has no symlink race of this kind to close)
const NOFOLLOW = constants.O_NOFOLLOW ?? 0;
/** append (and read back: a torn tail is found by reading), created 0600 when missing, never through a symlink */
export const APPEND_NOFOLLOW = constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | NOFOLLOW;
/** append only, created when missing, never through a symlink */
export const APPEND_ONLY_NOFOLLOW = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | NOFOLLOW;
/** a new file, never an existing name (a symlink included) */
export const CREATE_NEW = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NOFOLLOW;

/** the user the daemon runs as; undefined where there are no POSIX owners (the checks are then skipped) */
const ownUid = (): number | undefined => process.geteuid?.();

/** Why `st` (a directory or file) is not private to this user, or undefined when it is. */
export function notPrivate(st: Pick<Stats, 'uid' | 'mode'>): string | undefined {
  const uid = ownUid();
  if (uid === undefined) return undefined;
  if (st.uid !== uid) return `owned by uid ${st.uid}, not by this user (uid ${uid})`;
  if ((st.mode & 0o022) !== 0)
    return `writable by ${(st.mode & 0o002) !== 0 ? 'every user' : 'its group'} (mode ${(st.mode & 0o777).toString(8).padStart(4, '0')})`;
  return undefined;
}

/** A directory or file the daemon refuses to write in or to. */
export class NotPrivateError extends Error {
  override readonly name = 'NotPrivateError';
  readonly code = 'ENOTPRIVATE';
  constructor(
    readonly target: string,
    readonly why: string,
    /** what the user should do */
    readonly fix: string,
  ) {
    super(`${target} is ${why}; ${fix}`);
  }
}

const dirFix = (dir: string, why: string) =>
  why.startsWith('owned')
    ? `use a directory of the daemon's own user (or chown it to that user, then chmod 700 ${dir})`
    : `chmod 700 ${dir} (and check nothing in it was planted by another user)`;

function dirProblem(dir: string, st: Stats, follow: boolean): NotPrivateError | undefined {
  if (!follow && st.isSymbolicLink()) return new NotPrivateError(dir, 'a symlink', `remove it; the daemon makes this directory itself`);
  if (!st.isDirectory()) return new NotPrivateError(dir, 'not a directory', 'remove it or point the setting elsewhere');
  const why = notPrivate(st);
  return why ? new NotPrivateError(dir, why, dirFix(dir, why)) : undefined;
}

/**
 * Make `dir` (0700, with its missing parents) or check the one there: ours and
 * not writable by group or others, else NotPrivateError. `follow`: a symlink
 * standing for the directory is accepted (a configured directory may live on
 * another disk), its target checked; a directory the daemon makes itself
 * (`hermes/`, `spool/`) must be one.
 */
export async function ensurePrivateDir(dir: string, { follow = false }: { follow?: boolean } = {}): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const problem = dirProblem(dir, await (follow ? stat(dir) : lstat(dir)), follow);
  if (problem) throw problem;
}

/** ensurePrivateDir, synchronous (the compile cache is set up before anything async runs). */
export function ensurePrivateDirSync(dir: string, { follow = false }: { follow?: boolean } = {}): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const problem = dirProblem(dir, follow ? statSync(dir) : lstatSync(dir), follow);
  if (problem) throw problem;
}

/**
 * A file just opened for writing (without following a symlink): a regular
 * file, ours, not writable by group or others, and with one name (a hard link
 * planted to someone's file would have two). Throws NotPrivateError.
 */
export async function checkOpenedFile(file: string, handle: FileHandle): Promise<Stats> {
  const st = await handle.stat();
  if (!st.isFile()) throw new NotPrivateError(file, 'not a regular file', 'remove it');
  const why = notPrivate(st) ?? (st.nlink > 1 ? `a file with ${st.nlink} names (hard-linked)` : undefined);
  if (why) throw new NotPrivateError(file, why, 'move it away; the daemon writes only files of its own');
  return st;
}

/**
 * Append `data` to `file` (created 0600 when missing) without following a
 * symlink, and only to a private file of this user (NotPrivateError).
 */
export async function appendPrivate(file: string, data: string | Buffer): Promise<void> {
  const fh = await open(file, APPEND_ONLY_NOFOLLOW, 0o600);
  try {
    await checkOpenedFile(file, fh);
    await fh.writeFile(data);
  } finally {
    await fh.close();
  }
}

/** Truncate an existing `file` to empty, without following a symlink and only when it is private (NotPrivateError). */
export function truncatePrivateSync(file: string): void {
  const fd = openSync(file, constants.O_WRONLY | NOFOLLOW);
  try {
    const st = fstatSync(fd);
    const why = !st.isFile() ? 'not a regular file' : (notPrivate(st) ?? (st.nlink > 1 ? `a file with ${st.nlink} names (hard-linked)` : undefined));
    if (why) throw new NotPrivateError(file, why, 'move it away; the daemon writes only files of its own');
    ftruncateSync(fd, 0);
  } finally {
    closeSync(fd);
  }
}
