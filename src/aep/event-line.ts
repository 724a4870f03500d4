import type { AepEvent } from './event.js';

/** Lines already made, by event: the pipeline freezes every event, so its JSON never changes once written. */
const lines = new WeakMap<AepEvent, string>();

/**
 * An own event's one-line JSON, made once: the history writes it and the
 * stream then carries the same string, with no second serialization on the
 * hook path.
 */
export function eventLine(ev: AepEvent): string {
  let line = lines.get(ev);
  if (line === undefined) {
    line = JSON.stringify(ev);
    if (Object.isFrozen(ev)) lines.set(ev, line);
  }
  return line;
}

/** An event whose exact bytes are already known (a received command, kept as it came): its line is those bytes. */
export function adoptLine(ev: AepEvent, line: string): void {
  if (Object.isFrozen(ev)) lines.set(ev, line);
}
