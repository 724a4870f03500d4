import { chmodSync, existsSync, lstatSync, mkdirSync, statSync } from 'node:fs';
import module from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { notPrivate } from '../util/private-path.js';

/**
 * V8's compile cache for the daemon's modules, kept in `{state dir}/compile-cache`: a start then skips compiling
 * the few hundred modules it loads (measured on 2 shared cores: 10–25 % of the time before an empty start listens). Private by
 * where it lives (the state dir is the daemon's own, 0700), so nothing another user writes is ever loaded as code.
 * The cache dir itself is 0700 too (privateCacheDir).
 * Only when the state dir exists already (the first start creates it with its own mode), is absolute and is private
 * (this user's, not group- or world-writable: the daemon's start refuses any other, so no cache is made there first);
 * any failure leaves the start as it was. Node checks every entry against its source, so a rebuilt checkout recompiles.
 * Node writes the cache when the process exits (a daemon only ever killed -9 keeps none; never mid-run, so a full
 * state disk is not filled while the daemon needs it for its snapshot).
 */
export function enableDaemonCompileCache(env: NodeJS.ProcessEnv = process.env): void {
  // the same default the daemon's settings use (config.ts); an invalid AEP_STATE_DIR stops the start there
  const dir = env.AEP_STATE_DIR || path.join(os.homedir(), '.aep', 'state', 'hermes-aep');
  try {
    if (!path.isAbsolute(dir) || !existsSync(dir) || notPrivate(statSync(dir)) !== undefined) return;
    const cache = privateCacheDir(dir);
    if (cache) module.enableCompileCache?.(cache);
  } catch {
    /* no cache: the start compiles as before */
  }
}

/**
 * `{stateDir}/compile-cache`, private: made 0700 when missing (Node would make it 0755), an existing one of
 * ours tightened to 0700. Undefined (no cache) when something else is there: a file, a symlink, a directory
 * of another user.
 */
export function privateCacheDir(stateDir: string): string | undefined {
  const cache = path.join(stateDir, 'compile-cache');
  try {
    mkdirSync(cache, { mode: 0o700 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') return undefined;
  }
  const st = lstatSync(cache);
  if (!st.isDirectory() || (process.getuid !== undefined && st.uid !== process.getuid())) return undefined;
  // mkdir's mode passes the umask, and an older daemon (or Node itself) made it 0755
  if ((st.mode & 0o777) !== 0o700) chmodSync(cache, 0o700);
  return cache;
}
