import type { AepEvent } from '../aep/event.js';
import { eventLine } from '../aep/event-line.js';

/**
 * The one line format of the JSONL history (AEP-0003 §3.1): one event per
 * line, its JSON on one line (`eventLine`, made once per event and shared with
 * the stream), then a newline. Every reader of the history decodes through
 * here; what a reader then requires of the object is its own business.
 */
export const encodeLine = (ev: AepEvent): string => `${eventLine(ev)}\n`;

/** A line as a JSON object, or undefined (torn, not JSON, not an object). */
export function decodeObject(line: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(line);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A line of this daemon's own lane as an event: the shape the replay relies
 * on (identity strings and a payload object), or undefined.
 */
export function decodeOwnEvent(line: string): AepEvent | undefined {
  const v = decodeObject(line);
  if (!v || typeof v['type'] !== 'string' || typeof v['session'] !== 'string' || typeof v['id'] !== 'string') return undefined;
  if (typeof v['data'] !== 'object' || v['data'] === null) return undefined;
  return v as unknown as AepEvent;
}

/** A line of any agent's lane (own or ingested) with the routing strings every wire event needs, or undefined. */
export function decodeWireObject(line: string): Record<string, unknown> | undefined {
  const v = decodeObject(line);
  if (!v || typeof v['id'] !== 'string' || typeof v['source'] !== 'string' || typeof v['type'] !== 'string') return undefined;
  return v;
}
