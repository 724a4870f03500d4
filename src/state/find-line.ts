import { open } from 'node:fs/promises';
import type { AepEvent } from '../aep/event.js';
import type { LogCursor } from '../daemon/log-replay.js';

const CHUNK = 64 * 1024;

/**
 * Where the line of event `id` ends in a session log (the offset just past
 * its newline), searching back from the end of the file: the event is the
 * last one a snapshot covers, so only the events written since lie after it.
 * A candidate is accepted only if its whole line parses as an event with that
 * id (content quoting the id cannot fool it). Undefined if the line is not
 * within `maxBytes` of the end (never written: a lost write).
 */
export async function findLineEnd(file: string, id: string, maxBytes = 64 * 1024 * 1024): Promise<LogCursor | undefined> {
  const needle = Buffer.from(JSON.stringify(id), 'utf8');
  const fh = await open(file, 'r');
  try {
    const st = await fh.stat();
    const floor = Math.max(0, st.size - maxBytes);
    // a window [start, end) of the file, grown backwards until a match's line is whole
    let buf = Buffer.alloc(0);
    let start = st.size;
    while (start > floor) {
      const from = Math.max(floor, start - CHUNK);
      const chunk = Buffer.allocUnsafe(start - from);
      const { bytesRead } = await fh.read(chunk, 0, chunk.length, from);
      if (bytesRead !== chunk.length) return undefined;
      buf = Buffer.concat([chunk, buf]);
      start = from;
      // search matches right to left; stop at the first whose line is proven
      let at = buf.lastIndexOf(needle);
      while (at >= 0) {
        const ls = buf.lastIndexOf(10, at) + 1;
        const le = buf.indexOf(10, at);
        // the line must start inside the window (or at the file's start) and end with its newline
        if (le >= 0 && (ls > 0 || start === 0)) {
          if (isEventLine(buf, ls, le, at, id)) return { offset: start + le + 1, ino: st.ino, mtimeMs: st.mtimeMs };
        } else if (ls === 0 && start > floor) {
          break; // its line starts before the window: read more first
        }
        at = at > 0 ? buf.lastIndexOf(needle, at - 1) : -1;
      }
    }
    return undefined;
  } finally {
    await fh.close();
  }
}

const EVENT_START = Buffer.from('{"aep":', 'utf8');

/**
 * Whether [ls, le) is the line of event `id`. A line a crash tore and the
 * next write completed (`<fragment>{"aep":…}`) still counts from its last
 * event start before the match: that event was written whole.
 */
function isEventLine(buf: Buffer, ls: number, le: number, match: number, id: string): boolean {
  for (const from of [ls, buf.lastIndexOf(EVENT_START, match)]) {
    if (from < ls) continue;
    try {
      const ev = JSON.parse(buf.toString('utf8', from, le)) as AepEvent;
      if (ev?.id === id) return true;
    } catch {
      /* not an event line */
    }
  }
  return false;
}
