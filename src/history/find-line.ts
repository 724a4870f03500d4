import type { FileHandle } from 'node:fs/promises';
import { open } from 'node:fs/promises';
import type { AepEvent } from '../aep/event.js';
import type { HistoryCursor } from './replay.js';

const CHUNK = 64 * 1024;
/** Lines up to this long are parsed whole to check them; longer ones by the id at their start. */
const MAX_PARSED_LINE = 1024 * 1024;

/**
 * Where the line of event `id` ends in a session log (the offset just past
 * its newline), searching back from the end of the file: the event is the
 * last one a snapshot covers, so only the events written since lie after it.
 * A line counts only if it IS that event (parsed, or for a very long line its
 * leading `{"aep":"0.1","id":…`), so content quoting the id cannot fool it.
 * Undefined if no such line lies within `maxBytes` of the end (a lost write).
 */
export async function findLineEnd(file: string, id: string, maxBytes = 64 * 1024 * 1024): Promise<HistoryCursor | undefined> {
  const needle = Buffer.from(JSON.stringify(id), 'utf8');
  const fh = await open(file, 'r');
  try {
    const st = await fh.stat();
    const floor = Math.max(0, st.size - maxBytes);
    const found = (end: number): HistoryCursor => ({ offset: end, ino: st.ino, mtimeMs: st.mtimeMs });
    const chunk = Buffer.allocUnsafe(CHUNK);
    // the end (just past its newline) of the line whose start is still to be found; a torn last line has none
    let lineEnd = -1;
    let pos = st.size;
    while (pos > floor) {
      const from = Math.max(floor, pos - CHUNK);
      const n = pos - from;
      const { bytesRead } = await fh.read(chunk, 0, n, from);
      if (bytesRead !== n) return undefined;
      let i = n - 1;
      for (;;) {
        const nl = i >= 0 ? chunk.lastIndexOf(10, i) : -1;
        if (nl < 0) break;
        const start = from + nl + 1;
        if (lineEnd >= 0 && (await isEventLine(fh, chunk, from, n, start, lineEnd, id, needle))) return found(lineEnd);
        lineEnd = start;
        i = nl - 1;
      }
      pos = from;
    }
    // the file's first line (its start is the file's start)
    if (floor === 0 && lineEnd > 0 && (await isEventLine(fh, chunk, 0, 0, 0, lineEnd, id, needle))) return found(lineEnd);
    return undefined;
  } finally {
    await fh.close();
  }
}

/**
 * Whether [start, end) (its newline included) is the line of event `id`. A
 * line inside the chunk in hand is checked from it; a longer one is read.
 * A line a crash tore and the next write completed (`<fragment>{"aep":…}`)
 * counts from its last event start: that event was written whole.
 */
async function isEventLine(fh: FileHandle, chunk: Buffer, from: number, n: number, start: number, end: number, id: string, needle: Buffer): Promise<boolean> {
  const len = end - 1 - start;
  let line: Buffer;
  if (start >= from && end - 1 <= from + n) line = chunk.subarray(start - from, end - 1 - from);
  else if (len <= MAX_PARSED_LINE) {
    line = Buffer.allocUnsafe(len);
    if ((await fh.read(line, 0, len, start)).bytesRead !== len) return false;
  } else {
    const head = Buffer.allocUnsafe(512);
    const { bytesRead } = await fh.read(head, 0, 512, start);
    return head
      .subarray(0, bytesRead)
      .toString('utf8')
      .startsWith(`{"aep":"0.1","id":${JSON.stringify(id)},`);
  }
  if (!line.includes(needle)) return false;
  const at = line.lastIndexOf(needle);
  for (const s of [0, line.lastIndexOf(EVENT_START, at)]) {
    if (s < 0) continue;
    try {
      const ev = JSON.parse(line.toString('utf8', s)) as AepEvent;
      if (ev?.id === id) return true;
    } catch {
      /* not an event line */
    }
  }
  return false;
}

const EVENT_START = Buffer.from('{"aep":', 'utf8');
