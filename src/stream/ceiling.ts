import { downlevel } from '../capture/downlevel.js';
import { captureRank, type CaptureLevel } from '../core/capture-levels.js';
import type { CaptureEvent } from '../capture/types.js';
import type { WireEvent } from '../aep/wire.js';

/** A line to deliver and its UTF-8 size (what a transport's buffer counts). */
export interface CeilingLine {
  readonly line: string;
  readonly bytes: number;
}

/**
 * Per event, the lines already built per ceiling: N subscribers with one
 * ceiling share one serialization. Keyed weakly by the WireEvent, so a line
 * lives exactly as long as the event is referenced (buffer, queues).
 */
const memo = new WeakMap<WireEvent, Partial<Record<CaptureLevel | 'stored', CeilingLine>>>();

/** Whether delivering `w` under `ceiling` needs a rewrite (never up-level: AEP-0001 §8.2b). */
export const needsDownlevel = (w: WireEvent, ceiling: CaptureLevel | undefined): ceiling is CaptureLevel =>
  ceiling !== undefined && captureRank(ceiling) < captureRank(w.capture);

/**
 * The line a subscription with `ceiling` receives for `w` (AEP-0003 §6.4):
 * `w.line` itself (byte identity) when the event is at or below the ceiling,
 * else the event down-leveled per AEP-0001 §8.2 (a `redacted` ceiling on a
 * `full` event lands on `metadata`, §8.2e) and serialized once.
 */
export function ceilingLine(w: WireEvent, ceiling?: CaptureLevel): CeilingLine {
  const key = needsDownlevel(w, ceiling) ? ceiling : 'stored';
  let slot = memo.get(w);
  const hit = slot?.[key];
  if (hit) return hit;
  const line = key === 'stored' ? w.line : JSON.stringify(downlevel(w.event as CaptureEvent, key));
  const out: CeilingLine = { line, bytes: Buffer.byteLength(line, 'utf8') };
  if (!slot) memo.set(w, (slot = {}));
  slot[key] = out;
  return out;
}

/** `ceilingLine(w, ceiling).line`: the contract's one-call form. */
export const applyCeiling = (w: WireEvent, ceiling?: CaptureLevel): string => ceilingLine(w, ceiling).line;
