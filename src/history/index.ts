/**
 * The JSONL history (AEP-0003 §3.1), this folder's one door: the writer (the
 * durable sink), reading back at start (replay, the stream's recent events),
 * finding a line, following the files, other emitters' histories, and the
 * line codec and file naming they all share. Nothing outside src/history
 * imports its files directly (the boundary check says so).
 */
export { JsonlHistorySink } from './jsonl-history-sink.js';
export type { JsonlHistorySinkOptions } from './sink-options.js';
export { ForeignHistory, INGEST_DIR, foreignDirOf } from './foreign-history.js';
export { rebuildBuffer, type RebuildReport } from './recent.js';
export { emptyCounts, historyDirOf, listHistoryFiles, replayFile, replayRecentHistory, replayWholeFile } from './replay.js';
export type { HistoryCursor, HistoryFile, ReplayCounts } from './replay.js';
export { findLineEnd } from './find-line.js';
export { HistoryFollower } from './follow.js';
export { safeFileName } from './safe-file-name.js';
export { decodeObject, decodeOwnEvent, decodeWireObject, encodeLine } from './line-codec.js';
