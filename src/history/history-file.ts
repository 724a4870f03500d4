import type { FileHandle, open } from 'node:fs/promises';
import path from 'node:path';
import type { AepEvent } from '../aep/event.js';
import { encodeLine } from './line-codec.js';
import { APPEND_NOFOLLOW, checkOpenedFile } from '../util/private-path.js';
import { safeFileName } from './safe-file-name.js';
import type { Entry } from './pending-write.js';
import { SyncPoint } from './history-sync.js';

const NEWLINE = 0x0a;

/** One session's history file: its handle while open, and the hooks waiting for it. */
export interface HistoryFile {
  readonly path: string;
  handle: FileHandle | undefined;
  /** the open file's identity (device, inode): whether its path still names it (not deleted or renamed away) */
  id: { readonly dev: number; readonly ino: number } | undefined;
  /** bytes of the file known to end in '\n': where a failed write is cut back to */
  size: number;
  readonly queue: Entry[];
  /** its write loop is running */
  pumping: boolean;
  /** its handle was evicted from the open-handle bound while in use: closed at the next group boundary */
  evicted: boolean;
  /** the writes that landed, and how many of them the last fdatasync covered */
  readonly sync: SyncPoint;
}

export function newHistoryFile(path: string): HistoryFile {
  return { path, handle: undefined, id: undefined, size: 0, queue: [], pumping: false, evicted: false, sync: new SyncPoint() };
}

/** One hook's events as JSON lines, by the file of their session (a hook's events share one session in practice). */
export function linesByFile(dir: string, events: readonly AepEvent[]): Map<string, string[]> {
  const byFile = new Map<string, string[]>();
  for (const ev of events) {
    const file = path.join(dir, `${safeFileName(ev.session)}.jsonl`);
    let lines = byFile.get(file);
    if (!lines) byFile.set(file, (lines = []));
    lines.push(encodeLine(ev));
  }
  return byFile;
}

/** Write all of `buf` at the handle's position; how far it got, and the error that stopped it (a short write is one). */
export async function writeFully(handle: FileHandle, buf: Buffer): Promise<{ written: number; error?: unknown }> {
  let off = 0;
  try {
    while (off < buf.length) {
      const { bytesWritten } = await handle.write(buf, off, buf.length - off);
      if (bytesWritten <= 0) throw Object.assign(new Error('short write'), { code: 'ESHORTWRITE' });
      off += bytesWritten;
    }
    return { written: off };
  } catch (error) {
    return { written: off, error };
  }
}

/** A history file opened for append, and what opening it found. */
export interface Opened {
  readonly handle: FileHandle;
  readonly size: number;
  /** the file's device and inode */
  readonly id: { readonly dev: number; readonly ino: number };
  /** it did not exist (its directory entry must reach the disk too) */
  readonly created: boolean;
  /** bytes of a torn last line cut off (a crash or power loss mid-write) */
  readonly repaired: number;
}

/**
 * Open for append (and read: a torn tail is found by reading back); a file that ends in a torn line is cut back first.
 * Never through a symlink (ELOOP), and never a file that is not private to this user (NotPrivateError): nothing is
 * written to either.
 */
export async function openForAppend(openFn: typeof open, file: string): Promise<Opened> {
  const handle = await openFn(file, APPEND_NOFOLLOW, 0o600);
  try {
    const { size, dev, ino } = await checkOpenedFile(file, handle);
    const id = { dev, ino };
    if (size === 0) return { handle, size, id, created: true, repaired: 0 };
    if (await endsInNewline(handle, size)) return { handle, size, id, created: false, repaired: 0 };
    const end = await lastLineEnd(handle, size);
    if (end < size) await handle.truncate(end);
    return { handle, size: end, id, created: false, repaired: size - end };
  } catch (err) {
    await handle.close().catch(() => undefined);
    throw err;
  }
}

/**
 * After a failed write that started at `start` and put `wrote` bytes: cut the
 * file back to `cut`, the end of the last whole hook that landed. If the file
 * is not the size expected (someone else wrote to it: not supported, best
 * effort), cut to its last complete line instead. Returns the new size;
 * throws if even that fails.
 */
export async function cutBack(handle: FileHandle, start: number, wrote: number, cut: number): Promise<number> {
  const size = (await handle.stat()).size;
  const target = size === start + wrote ? cut : await lastLineEnd(handle, size);
  if (size > target) await handle.truncate(target);
  return target;
}

async function endsInNewline(handle: FileHandle, size: number): Promise<boolean> {
  const b = Buffer.alloc(1);
  const { bytesRead } = await handle.read(b, 0, 1, size - 1);
  return bytesRead === 1 && b[0] === NEWLINE;
}

/** Where the last complete line of the first `size` bytes ends (0 if there is none), reading backwards. */
async function lastLineEnd(handle: FileHandle, size: number): Promise<number> {
  const chunk = Buffer.alloc(Math.min(size, 64 * 1024));
  let end = size;
  while (end > 0) {
    const len = Math.min(chunk.length, end);
    const { bytesRead } = await handle.read(chunk, 0, len, end - len);
    const i = chunk.subarray(0, bytesRead).lastIndexOf(NEWLINE);
    if (i >= 0) return end - len + i + 1;
    end -= len;
  }
  return 0;
}
