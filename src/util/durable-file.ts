import { open, rename, unlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';

/**
 * Replace `file` so that a crash or power loss leaves the old version or the
 * new one, never a mix: `write` fills `{file}.{pid}.tmp` (0600), which is
 * fsynced, renamed over `file`, and the directory fsynced so the rename itself
 * survives. A failed write (a full disk) leaves no temp file behind.
 */
export async function replaceDurably<T>(file: string, write: (fh: FileHandle) => Promise<T>): Promise<T> {
  const tmp = `${file}.${process.pid}.tmp`;
  let result: T;
  try {
    const fh = await open(tmp, 'w', 0o600);
    try {
      result = await write(fh);
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
  return result;
}
