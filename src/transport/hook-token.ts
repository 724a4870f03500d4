import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, stat } from 'node:fs/promises';
import path from 'node:path';

/** The hook token: 32 random bytes as 64 lower-case hex characters, one line. */
export const HOOK_TOKEN_PATTERN = /^[0-9a-f]{64}$/;

export class HookTokenError extends Error {
  override readonly name = 'HookTokenError';
}

export interface HookToken {
  readonly token: string;
  /** true when this call wrote the file */
  readonly created: boolean;
  /** true when group or others may read the file */
  readonly exposed: boolean;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Read the token file, creating it first when missing: O_CREAT|O_EXCL with
 * mode 0600 in a 0700 directory, so when `install` and the daemon race,
 * whoever comes first wins and the other reads that token.
 */
export async function ensureHookToken(file: string): Promise<HookToken> {
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  try {
    const fh = await open(file, 'wx', 0o600);
    const token = randomBytes(32).toString('hex');
    try {
      await fh.writeFile(`${token}\n`);
      await fh.sync();
    } finally {
      await fh.close();
    }
    return { token, created: true, exposed: false };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  return { ...(await readHookToken(file)), created: false };
}

/** Read an existing token file; a writer that just created it gets a moment to finish. */
export async function readHookToken(file: string): Promise<Omit<HookToken, 'created'>> {
  for (let attempt = 0; ; attempt++) {
    let text: string;
    try {
      text = (await readFile(file, 'utf8')).trim();
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'error';
      throw new HookTokenError(`cannot read the hook token file ${file} (${code}); it must be a file the daemon's user can read`);
    }
    if (HOOK_TOKEN_PATTERN.test(text)) return { token: text, exposed: ((await stat(file)).mode & 0o077) !== 0 };
    if (text !== '' || attempt >= 20) throw new HookTokenError(`the hook token file ${file} must hold 64 hex characters (delete it to have a new one made)`);
    await sleep(50);
  }
}
