import { lstat } from 'node:fs/promises';
import path from 'node:path';
import { createHookTokenIfAbsent } from '../transport/hook-token.js';

/**
 * `{stateDir}/hook-token`: the bearer token every `POST /hook` over TCP must
 * carry, made by the same code as the daemon's (transport/hook-token.ts):
 * created only when absent, never overwritten, never printed.
 */
export async function ensureHookToken(stateDir: string, opts: { dryRun?: boolean } = {}): Promise<{ path: string; action: 'kept' | 'created' }> {
  const file = path.join(stateDir, 'hook-token');
  if (opts.dryRun) {
    const exists = await lstat(file).then(
      () => true,
      (err: unknown) => {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
        throw err;
      },
    );
    return { path: file, action: exists ? 'kept' : 'created' };
  }
  return { path: file, action: (await createHookTokenIfAbsent(file)) ? 'created' : 'kept' };
}
