import { createReadStream } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { AepEvent } from '../aep/event.js';

export interface ReplayCounts {
  files: number;
  events: number;
  skippedLines: number;
  /** files longer than the per-file budget, read from their tail only */
  tailOnly: number;
}

/** Per-file read budget: start-up time stays bounded however long a session log grew. */
export const REPLAY_TAIL_BYTES = 32 * 1024 * 1024;

/**
 * Streams the events of every session log touched within `windowMs`, file by
 * file in order, to `onEvent`: how a new daemon process rebuilds the state a
 * previous one held in memory (open runs, tool calls, cards, spans). Torn or
 * foreign lines are skipped and counted; an unreadable file is skipped.
 */
export async function replayRecentLogs(
  logDir: string,
  windowMs: number,
  nowMs: number,
  onEvent: (ev: AepEvent) => void,
  tailBytes = REPLAY_TAIL_BYTES,
): Promise<ReplayCounts> {
  const counts: ReplayCounts = { files: 0, events: 0, skippedLines: 0, tailOnly: 0 };
  const dir = path.join(logDir, 'hermes');
  let files: string[];
  try {
    files = (await readdir(dir)).filter((f) => f.endsWith('.jsonl'));
  } catch {
    return counts;
  }
  for (const f of files) {
    const file = path.join(dir, f);
    try {
      const st = await stat(file);
      if (st.mtimeMs < nowMs - windowMs) continue;
      counts.files++;
      const start = Math.max(0, st.size - tailBytes);
      if (start > 0) counts.tailOnly++;
      const lines = createInterface({ input: createReadStream(file, { encoding: 'utf8', start }), crlfDelay: Infinity });
      let first = start > 0;
      for await (const line of lines) {
        // reading from the middle: the first line is a fragment
        if (first) {
          first = false;
          continue;
        }
        if (!line) continue;
        let ev: AepEvent;
        try {
          ev = JSON.parse(line) as AepEvent;
        } catch {
          counts.skippedLines++;
          continue;
        }
        if (typeof ev?.type !== 'string' || typeof ev.session !== 'string' || typeof ev.id !== 'string') {
          counts.skippedLines++;
          continue;
        }
        counts.events++;
        onEvent(ev);
      }
    } catch {
      /* unreadable: its state is simply not rebuilt */
    }
  }
  return counts;
}
