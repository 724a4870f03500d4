import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { crc32 } from 'node:zlib';
import { z } from 'zod';
import type { HistoryCursor } from '../history/index.js';
import { replaceDurably } from '../util/durable-file.js';

/**
 * `{stateDir}/snapshot`: what a daemon process held in memory, so the next
 * one starts from it instead of re-reading every recent log.
 *
 *   line 1   header (JSON, padded to HEADER_SLOT bytes): format, version,
 *            who wrote it and for which log dir, the body's length and CRC-32
 *   body     line: the log cursors, as columns [names, offsets, inodes, mtimes]
 *            line: the span builder's state (JSON), or null with the mirror off
 *            then one line per identity lane, least recently seen first:
 *            `<session as a JSON string> TAB <1 if ended, else 0> TAB <last heard from, ms (empty: unknown)> TAB <lane JSON>`
 *
 * Lanes stay text until used (a JSON string never holds a raw tab or newline,
 * so the line splits without parsing). Written to a temporary file, fsynced,
 * renamed over the old one, and the directory fsynced: a reader sees the old
 * snapshot or the new one, never a mix.
 */
export const SNAPSHOT_FORMAT = 'hermes-aep/snapshot';
/** 3: a lane line carries when its session was last heard from (the idle close reads it without parsing the lane) */
export const SNAPSHOT_VERSION = 3;
/** Bigger than anything the bounded state can produce; a larger file is not read. */
export const MAX_SNAPSHOT_BYTES = 512 * 1024 * 1024;

/** spool keys a header holds at most (a spool drain has at most 64 files in flight; ~56 bytes each) */
export const MAX_SPOOL_KEYS = 100;

const headerSchema = z.object({
  format: z.literal(SNAPSHOT_FORMAT),
  version: z.number().int(),
  daemon: z.string(),
  written_at: z.string(),
  reason: z.string(),
  epoch: z.number().int().nonnegative(),
  log_dir: z.string(),
  mirror: z.string().nullable(),
  /** spooled hooks whose events the offsets cover but whose spool file was not deleted yet: never ingested again */
  spool_keys: z.array(z.string().max(128)).max(MAX_SPOOL_KEYS),
  lanes: z.number().int().nonnegative(),
  files: z.number().int().nonnegative(),
  body_bytes: z.number().int().nonnegative(),
  crc32: z.number().int().nonnegative(),
});

export type SnapshotHeader = z.infer<typeof headerSchema>;

export interface SnapshotLane {
  readonly session: string;
  readonly ended: boolean;
  /** when the session was last heard from (ms since the epoch); absent: unknown */
  readonly last?: number;
  /** the lane's JSON: text, or its UTF-8 bytes as read (decoded only when the lane is used) */
  readonly dormant: string | Uint8Array;
}

export interface SnapshotContent {
  readonly header: SnapshotHeader;
  readonly cursors: Map<string, HistoryCursor>;
  /** the span builder's state as JSON bytes (parsed and checked by its owner, when it needs it), or null */
  readonly mirror: Buffer | null;
  readonly lanes: SnapshotLane[];
}

/** Why a snapshot was not used: a fixed, content-free reason. */
export class SnapshotRejected extends Error {
  override readonly name = 'SnapshotRejected';
}

const reject = (why: string): never => {
  throw new SnapshotRejected(why);
};

/** `JSON.parse`, or a rejection with `why` */
const jsonOr = (text: string, why: string): unknown => {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return reject(why);
  }
};

export function snapshotPath(stateDir: string): string {
  return path.join(stateDir, 'snapshot');
}

/** The header line is padded to this many bytes, so it can be written last, once the body's length and CRC are known. */
export const HEADER_SLOT = 8192;
/** Body bytes gathered before one write: the event loop is free between writes. */
const WRITE_CHUNK = 256 * 1024;

/**
 * Write a snapshot atomically (tmp, fsync, rename, directory fsync), the body
 * streamed in slices: `mirror` is the span builder's state as JSON pieces
 * (or null), produced as the writes go, so a big state never holds the
 * event loop in one piece. Resolves with the bytes written.
 */
export async function writeSnapshot(
  file: string,
  h: Omit<SnapshotHeader, 'format' | 'version' | 'lanes' | 'files' | 'body_bytes' | 'crc32'>,
  cursors: ReadonlyMap<string, HistoryCursor>,
  mirror: Iterable<string> | null,
  lanes: readonly SnapshotLane[],
): Promise<number> {
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
  return replaceDurably(file, async (fh) => {
    let pos = HEADER_SLOT;
    let crc = 0;
    let parts: (string | Uint8Array)[] = [];
    let size = 0;
    const put = (s: string | Uint8Array): boolean => {
      parts.push(s);
      size += typeof s === 'string' ? s.length : s.byteLength;
      return size >= WRITE_CHUNK;
    };
    const flush = async () => {
      if (parts.length === 0) return;
      const buf = Buffer.concat(joinStrings(parts).map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : p)));
      parts = [];
      size = 0;
      crc = crc32(buf, crc);
      await writeAll(fh, buf, pos);
      pos += buf.length;
    };
    put(JSON.stringify([names, offsets, inos, mtimes]));
    put('\n');
    if (mirror === null) put('null');
    else for (const piece of mirror) if (put(piece)) await flush();
    put('\n');
    for (const l of lanes) {
      put(`${JSON.stringify(l.session)}${l.ended ? '\t1\t' : '\t0\t'}${l.last !== undefined ? Math.round(l.last) : ''}\t`);
      put(l.dormant);
      if (put('\n')) await flush();
    }
    await flush();
    const header: SnapshotHeader = {
      format: SNAPSHOT_FORMAT,
      version: SNAPSHOT_VERSION,
      ...h,
      lanes: lanes.length,
      files: names.length,
      body_bytes: pos - HEADER_SLOT,
      crc32: crc,
    };
    const line = JSON.stringify(header);
    if (Buffer.byteLength(line) >= HEADER_SLOT) throw new Error('snapshot header does not fit its slot');
    await writeAll(fh, Buffer.from(`${line.padEnd(HEADER_SLOT - 1, ' ')}\n`, 'utf8'), 0);
    return pos;
  });
}

/** Runs of strings joined into one (fewer, larger buffers to concatenate). */
function joinStrings(parts: readonly (string | Uint8Array)[]): (string | Uint8Array)[] {
  const out: (string | Uint8Array)[] = [];
  let run: string[] = [];
  for (const p of parts) {
    if (typeof p === 'string') run.push(p);
    else {
      if (run.length > 0) out.push(run.join(''));
      run = [];
      out.push(p);
    }
  }
  if (run.length > 0) out.push(run.join(''));
  return out;
}

async function writeAll(fh: FileHandle, buf: Buffer, at: number): Promise<void> {
  let off = 0;
  while (off < buf.length) {
    const { bytesWritten } = await fh.write(buf, off, buf.length - off, at + off);
    if (bytesWritten <= 0) throw new Error('short write');
    off += bytesWritten;
  }
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
  // the header line is padded with spaces (JSON allows them)
  const raw = jsonOr(buf.toString('utf8', 0, nl), 'header is not JSON');
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
  const l1 = body.indexOf(10);
  const l2 = l1 < 0 ? -1 : body.indexOf(10, l1 + 1);
  if (l2 < 0) reject('body shape');
  const cols = jsonOr(body.toString('utf8', 0, l1), 'body is not JSON');
  const rawMirror = body.subarray(l1 + 1, l2);
  const mirror = rawMirror.length === 4 && rawMirror.toString('latin1') === 'null' ? null : rawMirror;
  const cursors = readCursors(cols);
  if (cursors.size !== header.files) reject('cursor count');
  // lanes: split on bytes (a JSON string holds no raw tab or newline); each lane's JSON stays bytes until used
  const lanes: SnapshotLane[] = [];
  let at = l2 + 1;
  while (at < body.length) {
    const end = body.indexOf(10, at);
    if (end < 0) reject('lane line');
    const tab = body.indexOf(9, at);
    if (tab < 0 || tab > end - 3 || body[tab + 2] !== 9 || (body[tab + 1] !== 48 && body[tab + 1] !== 49)) reject('lane line');
    let session: unknown;
    // most ids need no unescaping: take them as they stand, parse the others
    const plain = tab - at >= 2 && body[at] === 34 && body[tab - 1] === 34 && !body.subarray(at + 1, tab - 1).some((b) => b === 92 || b === 34);
    if (plain) session = body.toString('utf8', at + 1, tab - 1);
    else {
      try {
        session = JSON.parse(body.toString('utf8', at, tab));
      } catch {
        return reject('lane session');
      }
    }
    if (typeof session !== 'string') reject('lane session');
    // the last-heard column: digits or nothing, up to the next tab (a lane's JSON holds no raw tab)
    const tab2 = body.indexOf(9, tab + 3);
    if (tab2 < 0 || tab2 >= end || tab2 - (tab + 3) > 16) reject('lane line');
    const digits = body.toString('latin1', tab + 3, tab2);
    if (!/^\d*$/.test(digits)) reject('lane line');
    const last = digits === '' ? undefined : Number(digits);
    lanes.push({ session: session as string, ended: body[tab + 1] === 49, ...(last !== undefined ? { last } : {}), dormant: body.subarray(tab2 + 1, end) });
    at = end + 1;
  }
  if (lanes.length !== header.lanes) reject('lane count');
  return { header, cursors, mirror, lanes };
}

function readCursors(v: unknown): Map<string, HistoryCursor> {
  const out = new Map<string, HistoryCursor>();
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
