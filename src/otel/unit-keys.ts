import type { AepEvent } from '../aep/event.js';
import type { UnitKind } from '../aep/lifecycle.js';

/**
 * A unit's key in the span builder's memory: its kind, its session and its
 * own id (run id, tool call id, attention request id, child session), NUL
 * separated so the parts stay unambiguous. A card's outcomes come on its own
 * session's lane (the identity stage pairs them there).
 */
export const unitKey = (kind: UnitKind, session: string, id: string): string => `${kind}\u0000${session}\u0000${id}`;

/** The session a unit key names. */
export function sessionOfKey(key: string): string | undefined {
  const a = key.indexOf('\u0000');
  const b = key.indexOf('\u0000', a + 1);
  return a < 0 || b < 0 ? undefined : key.slice(a + 1, b);
}

/** A tool event's call id, when it has one. */
export function callId(ev: AepEvent): string | undefined {
  const id = (ev.data.tool as Record<string, unknown> | undefined)?.call_id;
  return typeof id === 'string' && id.length > 0 ? id : undefined;
}

/** A tool event's name, when it is identifier-shaped (it names a span). */
export function toolName(ev: AepEvent): string | undefined {
  const n = (ev.data.tool as Record<string, unknown> | undefined)?.name;
  return typeof n === 'string' && /^[A-Za-z0-9_.:-]{1,128}$/.test(n) ? n : undefined;
}
