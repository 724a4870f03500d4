import { mkdir, open, readFile, rename, unlink } from 'node:fs/promises';
import path from 'node:path';

/**
 * The emitter's restart generation (AEP-0001 §7): read from the state dir,
 * bumped, and durably written BEFORE the daemon emits anything, so an epoch is
 * never reused even if the daemon dies right after starting.
 */
export async function bumpEpoch(stateDir: string): Promise<number> {
  await mkdir(stateDir, { recursive: true, mode: 0o700 });
  const file = path.join(stateDir, 'epoch');
  let previous = -1;
  try {
    const text = (await readFile(file, 'utf8')).trim();
    if (!/^\d{1,15}$/.test(text)) throw new Error(`corrupt epoch file ${file}: expected a non-negative integer`);
    previous = Number(text);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const next = previous + 1;
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    const fh = await open(tmp, 'w', 0o600);
    try {
      await fh.writeFile(`${next}\n`);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, file);
  } catch (err) {
    // a full or failing state dir: the start is refused, and leaves no temp file behind
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
  // the rename itself must survive a power loss, or an old epoch could come back
  const dir = await open(stateDir, 'r');
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
  return next;
}
