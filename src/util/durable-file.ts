import { randomBytes } from 'node:crypto';
import { open, rename, unlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { CREATE_NEW } from './private-path.js';

/** the replacement under way per file: writers of one file go one after another */
const inFlight = new Map<string, Promise<unknown>>();

/**
 * Replace `file` so that a crash or power loss leaves the old version or the
 * new one, never a mix. The new version is written through `write` (the
 * snapshot is written in slices, so the content is not one buffer) into a
 * temp file beside it: a new name (random, O_CREAT|O_EXCL|O_NOFOLLOW, 0600,
 * so nothing planted there is ever written through), fsynced, then renamed
 * over `file` (a rename replaces a symlink, never writes through it), then
 * the directory is fsynced so the rename itself survives a power loss. A
 * failure removes the temp file. Writers of one file are serialized.
 */
export function replaceDurably<T>(file: string, write: (fh: FileHandle) => Promise<T>): Promise<T> {
  const key = path.resolve(file);
  const before = inFlight.get(key) ?? Promise.resolve();
  const mine = before.then(
    () => replaceNow(file, write),
    () => replaceNow(file, write),
  );
  inFlight.set(key, mine);
  void mine.then(
    () => inFlight.get(key) === mine && inFlight.delete(key),
    () => inFlight.get(key) === mine && inFlight.delete(key),
  );
  return mine;
}

async function replaceNow<T>(file: string, write: (fh: FileHandle) => Promise<T>): Promise<T> {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
  let value: T;
  try {
    const fh = await open(tmp, CREATE_NEW, 0o600);
    try {
      value = await write(fh);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, file);
  } catch (err) {
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
  const dir = await open(path.dirname(file), 'r');
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
  return value;
}
