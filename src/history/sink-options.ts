import type { open } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../core/logger.js';

export interface JsonlHistorySinkOptions {
  /** bytes waiting for the disk, at most (one line at capture full can be a whole tool result) */
  readonly maxBytes?: number;
  /** fdatasync every file written within this many ms; 0 = before each group is acknowledged */
  readonly fsyncIntervalMs?: number;
  readonly log?: Logger;
  readonly probeIntervalMs?: number;
  /** how files are opened (tests inject faults here); `fs/promises` open by default */
  readonly open?: typeof open;
  /** handles kept open at most (default: a quarter of the process's descriptor limit, at most 256; fd-limit.ts) */
  readonly maxOpenFiles?: number;
  /** the directory under `root` written (`hermes`: this daemon's own lane) */
  readonly subdir?: string;
  /** files may sit one directory below it (`ingest/{agent}/{session}.jsonl`, foreign-history.ts) */
  readonly nested?: boolean;
  /** how its health is named and worded on /healthz and stderr (the Hermes log's by default) */
  readonly latch?: { readonly sink: string; readonly failing: string; readonly recovered: string };
}

/** Whether `file` sits in `dir` (or, `nested`, in one directory directly below it): a path can never leave the history dir. */
export function insideDir(dir: string, file: string, nested: boolean): boolean {
  const d = path.dirname(file);
  return d === dir || (nested && path.dirname(d) === dir && path.basename(d) !== '..' && path.basename(d) !== '.');
}
