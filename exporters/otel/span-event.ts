import type { AepEvent } from '../../src/aep/event.js';
import { captureRank, minCapture, type CaptureLevel } from '../../src/capture/levels.js';
import { downlevel } from '../../src/capture/downlevel.js';
import type { CaptureEvent } from '../../src/capture/types.js';
import { EVENT_ATTR as E } from './attribute-catalogue.js';
import type { Attrs } from './span-record.js';

/** bounded: open spans hold their events in memory until they end */
const MAX_DATA_CHARS = 16_384;

/**
 * The attributes of the span event one AEP event becomes: its identity, and
 * its data only where BOTH the event's own capture and the exporter's ceiling
 * allow `redacted` or above, down-leveled to the lower of the two.
 */
export function spanEventAttrs(ev: AepEvent, ceiling: CaptureLevel): Attrs {
  const attributes: Attrs = { [E.eventId]: ev.id, [E.sequence]: ev.seq, [E.epoch]: ev.epoch };
  if (ev.cause) attributes[E.cause] = ev.cause;
  const level = minCapture(ev.capture, ceiling);
  if (captureRank(level) >= captureRank('redacted')) {
    const data = downlevel(ev as unknown as CaptureEvent, level).data;
    if (data && Object.keys(data).length > 0) {
      const json = JSON.stringify(data);
      if (json.length <= MAX_DATA_CHARS) attributes[E.data] = json;
      else attributes[E.dataOmittedChars] = json.length;
    }
  }
  return attributes;
}
