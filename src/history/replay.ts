import { closeSync, fstatSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import path from 'node:path';
import { decodeOwnEvent } from './line-codec.js';
import type { AepEvent } from '../aep/event.js';

export interface ReplayCounts {
  files: number;
  events: number;
  skippedLines: number;
  /** files longer than the per-file budget, read from their tail only */
  tailOnly: number;
  /** bytes read */
  bytes: number;
}

/** Per-file read budget: start-up time stays bounded however long a session history file grew. */
export const REPLAY_TAIL_BYTES = 32 * 1024 * 1024;

/** A session history file as the directory listing saw it. */
export interface HistoryFile {
  /** file name inside `{historyDir}/hermes` */
  readonly name: string;
  readonly path: string;
  readonly size: number;
  readonly ino: number;
  readonly mtimeMs: number;
}

/** Where a history file was read up to: the end of its last whole line (a torn last line is not counted as read). */
export interface HistoryCursor {
  readonly offset: number;
  readonly ino: number;
  readonly mtimeMs: number;
}

export const historyDirOf = (historyDir: string): string => path.join(historyDir, 'hermes');

/**
 * Every session history file with its size, inode and mtime. Synchronous: it runs
 * before the daemon listens, when nothing else is waiting, and 10,000 stat
 * calls without a thread-pool round trip each take tens of milliseconds
 * instead of seconds under load.
 */
export function listHistoryFiles(historyDir: string): HistoryFile[] {
  const dir = historyDirOf(historyDir);
  let names: string[];
  try {
    names = readdirSync(dir).filter((f) => f.endsWith('.jsonl'));
  } catch {
    return [];
  }
  const out: HistoryFile[] = [];
  const prefix = `${dir}${path.sep}`;
  for (const name of names) {
    // a plain concatenation: path.join normalizes every one of 10,000 paths again
    const file = prefix + name;
    try {
      const st = statSync(file);
      if (st.isFile()) out.push({ name, path: file, size: st.size, ino: st.ino, mtimeMs: st.mtimeMs });
    } catch {
      /* gone meanwhile: nothing to read */
    }
  }
  return out;
}

/**
 * Read the events of one history file from byte `from` (a line start, or anywhere when
 * `fragment` says the first partial line must be skipped) to its end, in
 * order. Returns where reading stopped: the end of the last whole line. Torn
 * or foreign lines are skipped and counted; throws if the file cannot be read.
 */
export function replayFile(file: string, from: number, onEvent: (ev: AepEvent) => void, counts: ReplayCounts, fragment = false): HistoryCursor {
  const fd = openSync(file, 'r');
  try {
    const st = fstatSync(fd);
    const size = st.size;
    const buf = Buffer.allocUnsafe(Math.max(0, size - from));
    let got = 0;
    while (got < buf.length) {
      const n = readSync(fd, buf, got, buf.length - got, from + got);
      if (n <= 0) break;
      got += n;
    }
    counts.bytes += got;
    const data = buf.subarray(0, got);
    let pos = 0;
    if (fragment) {
      // reading from the middle: the first line is a fragment
      const nl = data.indexOf(10);
      pos = nl < 0 ? data.length : nl + 1;
    }
    const lastNl = data.lastIndexOf(10);
    const end = lastNl < pos ? pos : lastNl + 1;
    // one UTF-8 decode for the whole span of whole lines, then slices of it
    const text = data.toString('utf8', pos, end);
    let at = 0;
    while (at < text.length) {
      let nl = text.indexOf('\n', at);
      if (nl < 0) nl = text.length;
      if (nl > at) parseLine(text.slice(at, nl), onEvent, counts);
      at = nl + 1;
    }
    // a last line without its newline is torn (a crash mid-write): skipped, and not counted as read
    if (end < data.length) counts.skippedLines++;
    return { offset: from + end, ino: st.ino, mtimeMs: st.mtimeMs };
  } finally {
    closeSync(fd);
  }
}

function parseLine(line: string, onEvent: (ev: AepEvent) => void, counts: ReplayCounts): void {
  const ev = decodeOwnEvent(line);
  if (!ev) {
    counts.skippedLines++;
    return;
  }
  counts.events++;
  onEvent(ev);
}

/** Read one whole history file within the budget (its tail when longer); the cursor is where it stopped, or undefined if unreadable. */
export function replayWholeFile(
  f: HistoryFile,
  onEvent: (ev: AepEvent) => void,
  counts: ReplayCounts,
  tailBytes = REPLAY_TAIL_BYTES,
): HistoryCursor | undefined {
  counts.files++;
  const start = Math.max(0, f.size - tailBytes);
  if (start > 0) counts.tailOnly++;
  try {
    return replayFile(f.path, start, onEvent, counts, start > 0);
  } catch {
    return undefined; // unreadable: its state is simply not rebuilt
  }
}

export const emptyCounts = (): ReplayCounts => ({ files: 0, events: 0, skippedLines: 0, tailOnly: 0, bytes: 0 });

/**
 * Streams the events of every session history file touched within `windowMs`, file by
 * file in order, to `onEvent`: how a new daemon process rebuilds the state a
 * previous one held in memory (open runs, tool calls, cards, spans). Torn or
 * foreign lines are skipped and counted; an unreadable file is skipped.
 * `cursors` (when given) receives where each file was read up to.
 */
export async function replayRecentHistory(
  historyDir: string,
  windowMs: number,
  nowMs: number,
  onEvent: (ev: AepEvent) => void,
  tailBytes = REPLAY_TAIL_BYTES,
  cursors?: Map<string, HistoryCursor>,
): Promise<ReplayCounts> {
  const counts = emptyCounts();
  for (const f of listHistoryFiles(historyDir)) {
    if (f.mtimeMs < nowMs - windowMs) continue;
    const c = replayWholeFile(f, onEvent, counts, tailBytes);
    if (c && cursors) cursors.set(f.name, c);
  }
  return counts;
}
