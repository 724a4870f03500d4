import { randomBytes } from 'node:crypto';
import { link, lstat, mkdir, open, unlink } from 'node:fs/promises';
import path from 'node:path';

/**
 * `{stateDir}/hook-token`: the bearer token every `POST /hook` over TCP must
 * carry. 64 hex characters, mode 0600, created only when absent and never
 * overwritten (whoever comes first, install or the daemon, wins), never
 * printed. Written whole to a private temp file and then hard-linked into
 * place, which fails if the name exists: nobody ever reads half a token.
 */
export async function ensureHookToken(stateDir: string, opts: { dryRun?: boolean } = {}): Promise<{ path: string; action: 'kept' | 'created' }> {
  const file = path.join(stateDir, 'hook-token');
  try {
    await lstat(file);
    return { path: file, action: 'kept' };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  if (opts.dryRun) return { path: file, action: 'created' };
  await mkdir(stateDir, { recursive: true, mode: 0o700 });
  const tmp = path.join(stateDir, `.hook-token.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const fh = await open(tmp, 'wx', 0o600);
  try {
    await fh.writeFile(randomBytes(32).toString('hex'));
    await fh.sync();
  } finally {
    await fh.close();
  }
  try {
    await link(tmp, file);
    return { path: file, action: 'created' };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return { path: file, action: 'kept' };
    throw err;
  } finally {
    await unlink(tmp).catch(() => undefined);
  }
}
