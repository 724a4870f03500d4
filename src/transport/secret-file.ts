import { randomBytes } from 'node:crypto';
import { link, lstat, mkdir, open, readFile, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { CREATE_NEW, notPrivate } from '../util/private-path.js';

/**
 * A private secret file of the state dir (the hook token, the webhook secret):
 * 32 random bytes as 64 lower-case hex characters, one line, 0600. Created
 * when absent by whoever comes first (the daemon or `install`), never
 * overwritten, never printed: callers log its path, never its content.
 */
export const SECRET_PATTERN = /^[0-9a-f]{64}$/;

/** A secret file that cannot be trusted or read; `label` names it in the message ("the hook token"). */
export class SecretFileError extends Error {
  override readonly name: string = 'SecretFileError';
}

export interface SecretRead {
  readonly secret: string;
  /** true when group or others may read the file */
  readonly exposed: boolean;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Create the file when it is missing and say whether this call did: 64 hex
 * characters written whole to a private temp file (0600, in a 0700
 * directory), then hard-linked into place, which fails if the name exists. So
 * when `install` and the daemon race, whoever comes first wins, nobody ever
 * reads half a secret, and an existing one is never overwritten.
 */
export async function createSecretIfAbsent(file: string): Promise<boolean> {
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

/**
 * Read an existing secret file; a writer that just created it gets a moment
 * to finish. `label` names it in errors ("the hook token"); `fail` makes the
 * caller's error class.
 */
export async function readSecretFile(file: string, label: string, fail: (message: string) => Error = (m) => new SecretFileError(m)): Promise<SecretRead> {
  for (let attempt = 0; ; attempt++) {
    let text: string;
    try {
      text = (await readFile(file, 'utf8')).trim();
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'error';
      throw fail(`cannot read ${label} file ${file} (${code}); it must be a file the daemon's user can read`);
    }
    if (SECRET_PATTERN.test(text)) {
      const st = await stat(file);
      // a secret another user owns or may write is one they know (or can set): never trusted
      const why = notPrivate(st);
      if (why) throw fail(`${label} file ${file} is ${why}; delete it to have a private one made`);
      return { secret: text, exposed: (st.mode & 0o077) !== 0 };
    }
    if (text !== '' || attempt >= 20) throw fail(`${label} file ${file} must hold 64 hex characters (delete it to have a new one made)`);
    await sleep(50);
  }
}

/** Read the secret file, creating it first when missing (see createSecretIfAbsent). */
export async function ensureSecretFile(file: string, label: string, fail?: (message: string) => Error): Promise<SecretRead & { readonly created: boolean }> {
  const created = await createSecretIfAbsent(file);
  return { ...(await readSecretFile(file, label, fail)), created };
}
