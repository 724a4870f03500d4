import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { replaceDurably } from '../util/durable-file.js';

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
  // written durably BEFORE anything is emitted: an old epoch never comes back after a power loss,
  // and a full or failing state dir refuses the start without leaving a temp file
  await replaceDurably(file, (fh) => fh.writeFile(`${next}\n`));
  return next;
}
