import { DELIVERY_HEADER, EVENT_HEADER } from './signature.js';

/**
 * What a verified delivery's body must carry besides the shell-hook envelope
 * (agent/outbound_webhooks.py at NousResearch/hermes-agent 1fda2280): a
 * `delivery_id` (uuid4 hex) and a `timestamp` (`datetime.now(timezone.utc)
 * .isoformat()` with `+00:00` as `Z`: microseconds unless they are 0), and
 * headers that repeat the event and the id outside the signature.
 */

/** ISO-8601 UTC as Hermes writes it: seconds, an optional fraction, `Z`. */
const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?Z$/;
/** A delivery id the ledger may store as is: Hermes's are 32 lower-case hex characters. */
const DELIVERY_ID = /^[0-9A-Za-z_-]{8,128}$/;

/** The milliseconds since the epoch a Hermes timestamp names; undefined when it is not one (or names no real time). */
export function parseDeliveryTime(s: unknown): number | undefined {
  if (typeof s !== 'string') return undefined;
  const m = TIMESTAMP.exec(s);
  if (!m) return undefined;
  const [y, mo, d, h, mi, se] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const ms = Number(((m[7] ?? '') + '000').slice(0, 3));
  const t = Date.UTC(y, mo - 1, d, h, mi, se, ms);
  const back = new Date(t);
  // Date.UTC rolls 31 February over into March: a time that does not round-trip is no time
  if (back.getUTCFullYear() !== y || back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d || back.getUTCHours() !== h) return undefined;
  if (back.getUTCMinutes() !== mi || back.getUTCSeconds() !== se) return undefined;
  return t;
}

/** Whether a delivery made at `at` is within `windowMs` of `now`, either way (a clock ahead is as suspect as one behind). */
export function withinWindow(at: number, now: number, windowMs: number): boolean {
  return Math.abs(now - at) <= windowMs;
}

export type DeliveryCheck =
  | { readonly ok: true; readonly id: string; readonly at: number; readonly envelope: Record<string, unknown> }
  | { readonly ok: false; readonly why: 'invalid-delivery' | 'delivery-mismatch' | 'stale-delivery'; readonly detail: string };

/**
 * A signed body read as a delivery: its id and time checked, the unsigned
 * headers compared with the signed values, the time within the window. The
 * envelope handed on is the body without `delivery_id` and `timestamp`, the
 * rest (key order included) as Hermes built it: the shell hook's stdin has
 * the same fields, `profile` among them (agent/shell_hooks.py `_payload_fields`
 * at 00067189).
 */
export function checkDelivery(body: unknown, headers: Readonly<Record<string, string | string[] | undefined>>, now: number, windowMs: number): DeliveryCheck {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return { ok: false, why: 'invalid-delivery', detail: 'the body is not a JSON object' };
  const b = body as Record<string, unknown>;
  const id = b.delivery_id;
  if (typeof id !== 'string' || !DELIVERY_ID.test(id))
    return { ok: false, why: 'invalid-delivery', detail: 'delivery_id must be 8 to 128 letters, digits, dashes or underscores' };
  if (typeof b.hook_event_name !== 'string' || b.hook_event_name === '')
    return { ok: false, why: 'invalid-delivery', detail: 'hook_event_name must be a string' };
  const at = parseDeliveryTime(b.timestamp);
  if (at === undefined) return { ok: false, why: 'invalid-delivery', detail: 'timestamp must be ISO-8601 UTC (YYYY-MM-DDTHH:MM:SS[.ffffff]Z)' };
  if (headers[EVENT_HEADER] !== b.hook_event_name) return { ok: false, why: 'delivery-mismatch', detail: 'X-Hermes-Event differs from hook_event_name' };
  if (headers[DELIVERY_HEADER] !== id) return { ok: false, why: 'delivery-mismatch', detail: 'X-Hermes-Delivery differs from delivery_id' };
  if (!withinWindow(at, now, windowMs))
    return { ok: false, why: 'stale-delivery', detail: `the timestamp is ${Math.round((now - at) / 1000)} s from the daemon's clock` };
  const envelope: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(b)) if (k !== 'delivery_id' && k !== 'timestamp') envelope[k] = v;
  return { ok: true, id, at, envelope };
}
