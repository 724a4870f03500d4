import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { replaceDurably } from '../util/durable-file.js';

/** The largest epoch the file format takes (15 digits): a higher one is not a real epoch. */
export const MAX_EPOCH = 999_999_999_999_999;

/** Where a start's epoch came from: the state dir's file and the history read back at start. */
export interface EpochStart {
  readonly epoch: number;
  /** the state dir's epoch file (-1: none) */
  readonly stored: number;
  /** the highest epoch the history read back at start shows (-1: none) */
  readonly history: number;
  /** the state dir's epoch was behind the history (lost or replaced): the history's won */
  readonly behind: boolean;
}

/**
 * The state dir's epoch file: the last epoch a process of this daemon ran in,
 * -1 when there is none. A file that is not a non-negative integer refuses
 * the start (a guess could bring an old epoch back).
 */
export async function readStoredEpoch(stateDir: string): Promise<number> {
  await mkdir(stateDir, { recursive: true, mode: 0o700 });
  const file = path.join(stateDir, 'epoch');
  try {
    const text = (await readFile(file, 'utf8')).trim();
    if (!/^\d{1,15}$/.test(text)) throw new Error(`corrupt epoch file ${file}: expected a non-negative integer`);
    return Number(text);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    return -1;
  }
}

/**
 * The emitter's restart generation (AEP-0001 §7): one more than both the
 * stored epoch and the highest epoch in the history read back at start, so
 * an epoch never comes back even when the state dir was lost; durably written
 * BEFORE the daemon emits anything, so it is never reused even if the daemon
 * dies right after starting.
 */
export async function commitEpoch(stateDir: string, stored: number, history: number): Promise<EpochStart> {
  const epoch = Math.max(stored, history) + 1;
  // past the format's range the next start could not read it back, and a read-back that ignored it would go back
  if (epoch > MAX_EPOCH) throw new Error(`epoch exhausted: the next epoch would pass ${MAX_EPOCH}, the largest the epoch file takes`);
  // written durably BEFORE anything is emitted: an old epoch never comes back after a power loss,
  // and a full or failing state dir refuses the start without leaving a temp file
  await replaceDurably(path.join(stateDir, 'epoch'), (fh) => fh.writeFile(`${epoch}\n`));
  return { epoch, stored, history, behind: history > stored };
}

/** Read, raise past `history` (the highest epoch the history shows, -1: none) and write the epoch: the next one. */
export async function bumpEpoch(stateDir: string, history = -1): Promise<number> {
  return (await commitEpoch(stateDir, await readStoredEpoch(stateDir), history)).epoch;
}

/** The highest epoch among events read back from the history (-1: none); a value no epoch can have is ignored. */
export class HighestEpoch {
  value = -1;

  see(epoch: unknown): void {
    if (typeof epoch === 'number' && Number.isSafeInteger(epoch) && epoch >= 0 && epoch <= MAX_EPOCH && epoch > this.value) this.value = epoch;
  }
}
