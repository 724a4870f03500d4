import { existsSync } from 'node:fs';
import path from 'node:path';
import { safeFileName } from '../history/index.js';
import type { StreamHubApi } from './hub-types.js';

/** The own lane's directory under the history directory (jsonl-history-sink.ts's default `subdir`). */
const OWN_DIR = 'hermes';

/**
 * Whether `session` is one of this daemon's own (Hermes) sessions: the hub
 * holds (or remembers) its own lane, or the history has its file, so a
 * session evicted from the buffer or written by an earlier process still
 * counts. A foreign name that maps to the same file name counts too (refused
 * rather than let two sessions share one resume namespace).
 */
export function ownSessionCheck(historyDir: string, hub: Pick<StreamHubApi, 'isOwnSession'>): (session: string) => boolean {
  const dir = path.resolve(historyDir, OWN_DIR);
  return (session) => hub.isOwnSession(session) || existsSync(path.join(dir, `${safeFileName(session)}.jsonl`));
}
