import { randomBytes } from 'node:crypto';
import { link, lstat, mkdir, open, readFile, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { CREATE_NEW, notPrivate } from '../util/private-path.js';

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
 * Create the token file when it is missing and say whether this call did: 64
 * hex characters written whole to a private temp file (0600, in a 0700
 * directory), then hard-linked into place, which fails if the name exists. So
 * when `install` and the daemon race, whoever comes first wins, nobody ever
 * reads half a token, and an existing token is never overwritten.
 */
export async function createHookTokenIfAbsent(file: string): Promise<boolean> {
  const dir = path.dirname(file);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  try {
    await lstat(file);
    return false;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    const fh = await open(tmp, CREATE_NEW, 0o600);
    try {
      await fh.writeFile(randomBytes(32).toString('hex'));
      await fh.sync();
    } finally {
      await fh.close();
    }
    await link(tmp, file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  } finally {
    // a full disk or a lost race leaves no temp file behind
    await unlink(tmp).catch(() => undefined);
  }
}

/** Read the token file, creating it first when missing (see createHookTokenIfAbsent). */
export async function ensureHookToken(file: string): Promise<HookToken> {
  const created = await createHookTokenIfAbsent(file);
  return { ...(await readHookToken(file)), created };
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
    if (HOOK_TOKEN_PATTERN.test(text)) {
      const st = await stat(file);
      // a token another user owns or may write is one they know (or can set): never trusted
      const why = notPrivate(st);
      if (why) throw new HookTokenError(`the hook token file ${file} is ${why}; delete it to have a private one made`);
      return { token: text, exposed: (st.mode & 0o077) !== 0 };
    }
    if (text !== '' || attempt >= 20) throw new HookTokenError(`the hook token file ${file} must hold 64 hex characters (delete it to have a new one made)`);
    await sleep(50);
  }
}
