import { open, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import writeFileAtomic from 'write-file-atomic';

const NOTHING = Buffer.alloc(0);

/**
 * Replace `file` so that a crash or power loss leaves the old version or the
 * new one, never a mix. `write-file-atomic` owns the temp file (0600, a name
 * unique per call, writers of one file serialized, removed on failure and at
 * exit) and the rename; `write` fills it through its own handle (the snapshot
 * is written in slices, so the content is not one buffer), which is fsynced
 * before the rename. After the rename the directory is fsynced, so the rename
 * itself survives a power loss.
 */
export async function replaceDurably<T>(file: string, write: (fh: FileHandle) => Promise<T>): Promise<T> {
  let result: { value: T } | undefined;
  await writeFileAtomic(file, NOTHING, {
    mode: 0o600,
    // fsynced here, through the handle that wrote it
    fsync: false,
    // write-file-atomic awaits this callback on its promise path (the one used here) before it writes and renames
    // eslint-disable-next-line @typescript-eslint/no-misused-promises
    tmpfileCreated: async (tmp: string) => {
      const fh = await open(tmp, 'r+');
      try {
        result = { value: await write(fh) };
        await fh.sync();
      } finally {
        await fh.close();
      }
    },
  });
  const dir = await open(path.dirname(file), 'r');
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
  return result!.value;
}
