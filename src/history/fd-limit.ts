import { readFileSync } from 'node:fs';

/** handles a history pool keeps open at most, whatever the limit (least recently written closed first) */
export const MAX_OPEN_FILES = 256;
/** and at least (a limit this low leaves the daemon little else either) */
export const MIN_OPEN_FILES = 8;
/**
 * A pool takes a quarter of the process's descriptor limit: there are two
 * pools (this daemon's sessions, and other agents' logs the stream ingests),
 * and the other half stays for the listeners' sockets, the stream's
 * subscribers, the spool, the replay at start and Node's own.
 */
const SHARE = 4;

/** The soft RLIMIT_NOFILE in /proc/self/limits' text ("Max open files  <soft>  <hard>  files"); undefined if absent or unlimited. */
export function parseOpenFileLimit(text: string): number | undefined {
  const m = /^Max open files\s+(\d+|unlimited)\s/m.exec(text);
  if (!m || m[1] === 'unlimited') return undefined;
  const n = Number(m[1]);
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

/** How many handles one pool may keep under a soft limit of `limit` descriptors (undefined: not known). */
export function poolBound(limit: number | undefined): number {
  if (limit === undefined) return MAX_OPEN_FILES;
  return Math.min(MAX_OPEN_FILES, Math.max(MIN_OPEN_FILES, Math.floor(limit / SHARE)));
}

let cached: number | undefined;

/**
 * The pool bound for this process, read once (Node has no getrlimit: on
 * Linux the limit is in /proc/self/limits, read after Node raised its soft
 * limit to the hard one at start; elsewhere MAX_OPEN_FILES).
 */
export function processPoolBound(): number {
  if (cached !== undefined) return cached;
  let limit: number | undefined;
  if (process.platform === 'linux') {
    try {
      limit = parseOpenFileLimit(readFileSync('/proc/self/limits', 'utf8'));
    } catch {
      limit = undefined;
    }
  }
  return (cached = poolBound(limit));
}

/** Out of descriptors: the process's (EMFILE) or the system's (ENFILE). */
export const outOfDescriptors = (err: unknown): boolean => {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return code === 'EMFILE' || code === 'ENFILE';
};
