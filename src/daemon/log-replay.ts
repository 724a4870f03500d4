import { createReadStream } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { AepEvent } from '../aep/event.js';

export interface ReplayCounts {
  files: number;
  events: number;
  skippedLines: number;
}

/**
 * Streams the events of every session log touched within `windowMs`, file by
 * file in order, to `onEvent`: how a new daemon process rebuilds the state a
 * previous one held in memory (open runs, tool calls, cards, spans). Torn or
 * foreign lines are skipped and counted; an unreadable file is skipped.
 */
export async function replayRecentLogs(logDir: string, windowMs: number, nowMs: number, onEvent: (ev: AepEvent) => void): Promise<ReplayCounts> {
  const counts: ReplayCounts = { files: 0, events: 0, skippedLines: 0 };
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
      if ((await stat(file)).mtimeMs < nowMs - windowMs) continue;
      counts.files++;
      const lines = createInterface({ input: createReadStream(file, { encoding: 'utf8' }), crlfDelay: Infinity });
      for await (const line of lines) {
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
