import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { open, rename, unlink } from 'node:fs/promises';
import path from 'node:path';
import { crc32 } from 'node:zlib';
import { z } from 'zod';
import type { LogCursor } from '../daemon/log-replay.js';

/**
 * `{stateDir}/snapshot`: what a daemon process held in memory, so the next
 * one starts from it instead of re-reading every recent log.
 *
 *   line 1   header (JSON): format, version, who wrote it and for which log
 *            dir, the body's length and CRC-32
 *   body     line: the log cursors, as columns [names, offsets, inodes, mtimes]
 *            line: the span builder's state (JSON), or null with the mirror off
 *            then one line per identity lane, least recently seen first:
 *            `<session as a JSON string> TAB <1 if ended, else 0> TAB <lane JSON>`
 *
 * Lanes stay text until used (a JSON string never holds a raw tab or newline,
 * so the line splits without parsing). Written to a temporary file, fsynced,
 * renamed over the old one, and the directory fsynced: a reader sees the old
 * snapshot or the new one, never a mix.
 */
export const SNAPSHOT_FORMAT = 'hermes-aep/snapshot';
export const SNAPSHOT_VERSION = 1;
/** Bigger than anything the bounded state can produce; a larger file is not read. */
export const MAX_SNAPSHOT_BYTES = 512 * 1024 * 1024;

const headerSchema = z.object({
  format: z.literal(SNAPSHOT_FORMAT),
  version: z.number().int(),
  daemon: z.string(),
  written_at: z.string(),
  reason: z.string(),
  epoch: z.number().int().nonnegative(),
  log_dir: z.string(),
  mirror: z.string().nullable(),
  lanes: z.number().int().nonnegative(),
  files: z.number().int().nonnegative(),
  body_bytes: z.number().int().nonnegative(),
  crc32: z.number().int().nonnegative(),
});

export type SnapshotHeader = z.infer<typeof headerSchema>;

export interface SnapshotLane {
  readonly session: string;
  readonly ended: boolean;
  readonly dormant: string;
}

export interface SnapshotContent {
  readonly header: SnapshotHeader;
  readonly cursors: Map<string, LogCursor>;
  /** the span builder's state as parsed JSON (checked by its owner), or null */
  readonly mirror: unknown;
  readonly lanes: SnapshotLane[];
}

/** Why a snapshot was not used: a fixed, content-free reason. */
export class SnapshotRejected extends Error {
  override readonly name = 'SnapshotRejected';
}

const reject = (why: string): never => {
  throw new SnapshotRejected(why);
};

export function snapshotPath(stateDir: string): string {
  return path.join(stateDir, 'snapshot');
}

/** The bytes of a snapshot: header line + body, as one buffer. */
export function encodeSnapshot(
  h: Omit<SnapshotHeader, 'format' | 'version' | 'lanes' | 'files' | 'body_bytes' | 'crc32'>,
  cursors: ReadonlyMap<string, LogCursor>,
  mirror: unknown,
  lanes: readonly SnapshotLane[],
): Buffer {
  const names: string[] = [];
  const offsets: number[] = [];
  const inos: number[] = [];
  const mtimes: number[] = [];
  for (const [name, c] of cursors) {
    names.push(name);
    offsets.push(c.offset);
    inos.push(c.ino);
    mtimes.push(c.mtimeMs);
  }
  const parts: string[] = [JSON.stringify([names, offsets, inos, mtimes]), '\n', JSON.stringify(mirror ?? null), '\n'];
  for (const l of lanes) parts.push(JSON.stringify(l.session), l.ended ? '\t1\t' : '\t0\t', l.dormant, '\n');
  const body = Buffer.from(parts.join(''), 'utf8');
  const header: SnapshotHeader = {
    format: SNAPSHOT_FORMAT,
    version: SNAPSHOT_VERSION,
    ...h,
    lanes: lanes.length,
    files: names.length,
    body_bytes: body.length,
    crc32: crc32(body),
  };
  return Buffer.concat([Buffer.from(`${JSON.stringify(header)}\n`, 'utf8'), body]);
}

/**
 * Read and check a snapshot: header shape, format and version, the body's
 * length and CRC-32, the cursor columns and every lane line. Throws
 * `SnapshotRejected` with a short reason on anything out of place (the caller
 * then replays the logs); returns undefined when there is no snapshot.
 */
export function readSnapshot(file: string): SnapshotContent | undefined {
  let buf: Buffer;
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    return reject(`unreadable (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  try {
    const size = fstatSync(fd).size;
    if (size > MAX_SNAPSHOT_BYTES) reject('too large');
    buf = Buffer.allocUnsafe(size);
    let got = 0;
    while (got < size) {
      const n = readSync(fd, buf, got, size - got, got);
      if (n <= 0) break;
      got += n;
    }
    if (got !== size) reject('short read');
  } finally {
    closeSync(fd);
  }
  const nl = buf.indexOf(10);
  if (nl < 0) reject('no header');
  let raw: unknown;
  try {
    raw = JSON.parse(buf.toString('utf8', 0, nl));
  } catch {
    return reject('header is not JSON');
  }
  const parsed = headerSchema.safeParse(raw);
  if (!parsed.success) {
    const format = (raw as { format?: unknown })?.format;
    return reject(format === SNAPSHOT_FORMAT ? 'header shape' : 'not a snapshot');
  }
  const header = parsed.data;
  if (header.version !== SNAPSHOT_VERSION) reject(`format version ${header.version}, this daemon reads ${SNAPSHOT_VERSION}`);
  const body = buf.subarray(nl + 1);
  if (body.length !== header.body_bytes) reject('truncated');
  if (crc32(body) !== header.crc32) reject('checksum mismatch');
  const text = body.toString('utf8');
  const l1 = text.indexOf('\n');
  const l2 = l1 < 0 ? -1 : text.indexOf('\n', l1 + 1);
  if (l2 < 0) reject('body shape');
  let cols: unknown;
  let mirror: unknown;
  try {
    cols = JSON.parse(text.slice(0, l1));
    mirror = JSON.parse(text.slice(l1 + 1, l2));
  } catch {
    return reject('body is not JSON');
  }
  const cursors = readCursors(cols);
  if (cursors.size !== header.files) reject('cursor count');
  const lanes: SnapshotLane[] = [];
  let at = l2 + 1;
  while (at < text.length) {
    const end = text.indexOf('\n', at);
    if (end < 0) reject('lane line');
    const tab = text.indexOf('\t', at);
    if (tab < 0 || tab > end - 3 || text[tab + 2] !== '\t' || (text[tab + 1] !== '0' && text[tab + 1] !== '1')) reject('lane line');
    let session: unknown;
    // most ids need no unescaping: take them as they stand, parse the others
    const raw = tab - at >= 2 && text.charCodeAt(at) === 34 && text.charCodeAt(tab - 1) === 34 ? text.slice(at + 1, tab - 1) : undefined;
    if (raw !== undefined && !raw.includes('\\') && !raw.includes('"')) session = raw;
    else {
      try {
        session = JSON.parse(text.slice(at, tab));
      } catch {
        return reject('lane session');
      }
    }
    if (typeof session !== 'string') reject('lane session');
    lanes.push({ session: session as string, ended: text[tab + 1] === '1', dormant: text.slice(tab + 3, end) });
    at = end + 1;
  }
  if (lanes.length !== header.lanes) reject('lane count');
  return { header, cursors, mirror, lanes };
}

function readCursors(v: unknown): Map<string, LogCursor> {
  const out = new Map<string, LogCursor>();
  if (!Array.isArray(v) || v.length !== 4 || !v.every(Array.isArray)) return reject('cursors');
  const [names, offsets, inos, mtimes] = v as unknown[][];
  const n = names!.length;
  if (offsets!.length !== n || inos!.length !== n || mtimes!.length !== n) reject('cursors');
  const nat = (x: unknown): x is number => typeof x === 'number' && Number.isSafeInteger(x) && x >= 0;
  for (let i = 0; i < n; i++) {
    const name = names![i];
    const offset = offsets![i];
    const ino = inos![i];
    const mtimeMs = mtimes![i];
    // inode numbers can pass 2^53 on some filesystems: compared as the same lossy number both ways
    if (typeof name !== 'string' || !name.endsWith('.jsonl') || name.includes('/') || !nat(offset) || typeof ino !== 'number' || !(ino >= 0)) reject('cursor');
    if (typeof mtimeMs !== 'number' || !Number.isFinite(mtimeMs)) reject('cursor');
    out.set(name as string, { offset: offset as number, ino: ino as number, mtimeMs: mtimeMs as number });
  }
  return out;
}

/** Write a file so that a crash at any point leaves the old one or the new one: tmp, fsync, rename, fsync the directory. */
export async function writeFileAtomic(file: string, data: Buffer): Promise<void> {
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    const fh = await open(tmp, 'w', 0o600);
    try {
      await fh.writeFile(data);
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
}
