import type { AepEvent } from '../aep/event.js';
import { EVENT_ATTR as E } from './attribute-catalogue.js';
import type { Attrs } from './span-record.js';

/** bounded: open spans hold their events in memory until they end */
const MAX_DATA_CHARS = 16_384;

/**
 * The attributes of the span event one AEP event becomes: its identity, and
 * its data as `visibleData` (span-content.ts) leaves it: only where BOTH the
 * event's own capture and the exporter's ceiling allow `redacted` or above,
 * down-leveled to the lower of the two.
 */
export function spanEventAttrs(ev: AepEvent, data: Record<string, unknown> | undefined): Attrs {
  const attributes: Attrs = { [E.eventId]: ev.id, [E.sequence]: ev.seq, [E.epoch]: ev.epoch };
  if (ev.cause) attributes[E.cause] = ev.cause;
  if (data && Object.keys(data).length > 0) {
    const json = JSON.stringify(data);
    if (json.length <= MAX_DATA_CHARS) attributes[E.data] = json;
    else attributes[E.dataOmittedChars] = json.length;
  }
  return attributes;
}
