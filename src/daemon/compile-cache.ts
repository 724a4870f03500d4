import { existsSync, statSync } from 'node:fs';
import module from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { ensurePrivateDirSync, notPrivate } from '../util/private-path.js';

/**
 * V8's compile cache for the daemon's modules, kept in `{state dir}/compile-cache`: a start then skips compiling
 * the few hundred modules it loads (measured on 2 shared cores: 10–25 % of the time before an empty start listens). Private by
 * where it lives (the state dir is the daemon's own, 0700), so nothing another user writes is ever loaded as code.
 * Only when the state dir exists already (the first start creates it with its own mode), is absolute and is private
 * (this user's, not group- or world-writable: the daemon's start refuses any other, so no cache is made there first),
 * and `compile-cache/` is made 0700 or found private (not a symlink); any failure leaves the start as it was. Node checks every entry against its source, so a rebuilt checkout recompiles.
 * Node writes the cache when the process exits (a daemon only ever killed -9 keeps none; never mid-run, so a full
 * state disk is not filled while the daemon needs it for its snapshot).
 */
export function enableDaemonCompileCache(env: NodeJS.ProcessEnv = process.env): void {
  // the same default the daemon's settings use (config.ts); an invalid AEP_STATE_DIR stops the start there
  const dir = env.AEP_STATE_DIR || path.join(os.homedir(), '.aep', 'state', 'hermes-aep');
  try {
    if (!path.isAbsolute(dir) || !existsSync(dir) || notPrivate(statSync(dir)) !== undefined) return;
    const cache = path.join(dir, 'compile-cache');
    ensurePrivateDirSync(cache);
    module.enableCompileCache?.(cache);
  } catch {
    /* no cache: the start compiles as before */
  }
}
