import { closeSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import path from 'node:path';
import { decodeWireObject } from './line-codec.js';
import { historyDirOf } from './replay.js';
import { foreignDirOf } from './foreign-history.js';
import { wireOf, type Origin, type WireEvent } from '../aep/wire.js';

/**
 * Bytes read at start, at most, whatever AEP_STREAM_MAX_BYTES allows: 2 MiB (4 MiB
 * was some 20,000 events in 100-200 ms on a shared 2-core machine, most of it
 * JSON.parse, within the 1 s restart budget the snapshot restore also spends. The newest sessions come first;
 * an older position a consumer asks for gets `replay-exhausted` (AEP-0003 §5)
 * and is in the history.
 */
export const REBUILD_MAX_BYTES = 2 * 1024 * 1024;

export interface RebuildLimits {
  /** the newest this many history files (AEP_STREAM_SESSIONS) */
  readonly sessions: number;
  /** the last this many events of each (AEP_STREAM_BUFFER) */
  readonly buffer: number;
  /** bytes read over all files, at most (AEP_STREAM_MAX_BYTES) */
  readonly maxBytes: number;
  /** the start-time cap (REBUILD_MAX_BYTES unless a test says otherwise) */
  readonly maxRebuildBytes?: number;
}

export interface RebuildReport {
  files: number;
  events: number;
  bytes: number;
  /** lines that did not parse as an event (torn, foreign to the format) */
  skipped: number;
  ms: number;
}

export interface Candidate {
  readonly path: string;
  readonly mtimeMs: number;
  readonly size: number;
  readonly origin: Origin;
}

/** `*.jsonl` in `dir` (a missing dir is empty), stat'ed synchronously: this runs before the daemon listens. */
function jsonlIn(dir: string, origin: Origin, out: Candidate[]): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.endsWith('.jsonl')) continue;
    const file = path.join(dir, name);
    try {
      const st = statSync(file);
      if (st.isFile() && st.size > 0) out.push({ path: file, mtimeMs: st.mtimeMs, size: st.size, origin });
    } catch {
      /* gone meanwhile */
    }
  }
}

/**
 * Every history file of every agent: the Hermes lane (own) and `ingest/{agent}/` (foreign). The own ones may come
 * listed already (the start-up restore stats every session log: 10,000 of them take ~50 ms, not to be paid twice).
 */
export function historyFiles(historyDir: string, own?: readonly { readonly path: string; readonly mtimeMs: number; readonly size: number }[]): Candidate[] {
  const out: Candidate[] = [];
  if (own) {
    for (const f of own) if (f.size > 0) out.push({ path: f.path, mtimeMs: f.mtimeMs, size: f.size, origin: 'own' });
  } else {
    jsonlIn(historyDirOf(historyDir), 'own', out);
  }
  const ingest = foreignDirOf(historyDir);
  let agents: string[] = [];
  try {
    agents = readdirSync(ingest);
  } catch {
    /* nothing ingested yet */
  }
  for (const a of agents) jsonlIn(path.join(ingest, a), 'ingest', out);
  return out;
}

/**
 * The last `lines` whole lines of a file, reading backwards within `budget`
 * bytes: a line cut by the budget (or torn by a crash) is not returned.
 */
function tailLines(file: string, size: number, lines: number, budget: number): { lines: string[]; bytes: number } {
  const fd = openSync(file, 'r');
  try {
    const chunk = 64 * 1024;
    const parts: Buffer[] = [];
    let end = size;
    let read = 0;
    let newlines = 0;
    // one newline more than lines wanted: the start of the first wanted line
    while (end > 0 && read < budget && newlines <= lines) {
      const len = Math.min(chunk, end, budget - read);
      const buf = Buffer.allocUnsafe(len);
      const n = readSync(fd, buf, 0, len, end - len);
      if (n <= 0) break;
      const got = buf.subarray(0, n);
      for (let i = got.indexOf(0x0a); i >= 0; i = got.indexOf(0x0a, i + 1)) newlines++;
      parts.unshift(got);
      read += n;
      end -= n;
    }
    const text = Buffer.concat(parts).toString('utf8');
    const all = text.split('\n');
    // the last element follows the last newline (empty, or a torn line); the first is partial unless the file start was read
    all.pop();
    if (end > 0) all.shift();
    return { lines: all.slice(-lines), bytes: read };
  } finally {
    closeSync(fd);
  }
}

function parse(line: string, origin: Origin): WireEvent | undefined {
  if (line.length === 0) return undefined;
  const ev = decodeWireObject(line);
  return ev ? wireOf(Object.freeze(ev), line, origin) : undefined;
}

/**
 * Refill the replay buffer from the history at start, before the listeners
 * open, so a consumer resumes across a restart (kill -9 included) without a
 * gap (AEP-0003 §5, §7). The newest `sessions` files of all agents, the last
 * `buffer` events of each, `maxBytes` (and REBUILD_MAX_BYTES) read at most; published oldest file
 * first so the hub's least-recently-active eviction keeps the newest. The
 * lines are the history's bytes: each event goes out exactly as it was written.
 */
export function rebuildBuffer(
  historyDir: string,
  limits: RebuildLimits,
  publish: (events: readonly WireEvent[]) => void,
  own?: Parameters<typeof historyFiles>[1],
): RebuildReport {
  const t0 = performance.now();
  const report: RebuildReport = { files: 0, events: 0, bytes: 0, skipped: 0, ms: 0 };
  const newest = historyFiles(historyDir, own)
    .sort((a, b) => b.mtimeMs - a.mtimeMs)
    .slice(0, limits.sessions);
  const batches: WireEvent[][] = [];
  let budget = Math.min(limits.maxBytes, limits.maxRebuildBytes ?? REBUILD_MAX_BYTES);
  for (const f of newest) {
    if (budget <= 0) break;
    let tail: { lines: string[]; bytes: number };
    try {
      tail = tailLines(f.path, f.size, limits.buffer, budget);
    } catch {
      continue; // unreadable: not rebuilt
    }
    budget -= tail.bytes;
    report.bytes += tail.bytes;
    report.files++;
    const events: WireEvent[] = [];
    for (const line of tail.lines) {
      const w = parse(line, f.origin);
      if (w) events.push(w);
      else report.skipped++;
    }
    report.events += events.length;
    batches.push(events);
  }
  for (let i = batches.length - 1; i >= 0; i--) if (batches[i]!.length > 0) publish(batches[i]!);
  report.ms = Math.round(performance.now() - t0);
  return report;
}
