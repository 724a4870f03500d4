import type { Position } from '../aep/wire.js';

export type FromParse = { readonly ok: true; readonly from: readonly Position[] | 'all' } | { readonly ok: false; readonly detail: string };

const isRecord = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);
const isCounter = (x: unknown): x is number => typeof x === 'number' && Number.isSafeInteger(x) && x >= 0;

/**
 * A `from` member (AEP-0003 §3.3, §5, §6.5): an array of `{session, epoch,
 * seq}` resume positions (AEP-0001 §7.6), or the literal `"all"`. Anything
 * else is refused whole (`invalid-filter` at the binding); the detail names
 * the index, never a value.
 */
export function parseFrom(json: unknown): FromParse {
  if (json === 'all') return { ok: true, from: 'all' };
  if (!Array.isArray(json)) return { ok: false, detail: 'from must be an array of {session, epoch, seq} or "all"' };
  const out: Position[] = [];
  for (let i = 0; i < json.length; i++) {
    const p: unknown = json[i];
    if (!isRecord(p)) return { ok: false, detail: `from[${i}] must be an object` };
    const { session, epoch, seq } = p;
    if (typeof session !== 'string' || session.length === 0) return { ok: false, detail: `from[${i}].session must be a non-empty string` };
    if (!isCounter(epoch)) return { ok: false, detail: `from[${i}].epoch must be an integer >= 0` };
    if (!isCounter(seq)) return { ok: false, detail: `from[${i}].seq must be an integer >= 0` };
    out.push(Object.freeze({ session, epoch, seq }));
  }
  return { ok: true, from: Object.freeze(out) };
}

const COUNTER = /^(0|[1-9][0-9]*)$/;

/**
 * An SSE `Last-Event-ID` (AEP-0003 §3.3): `{session}:{epoch}:{seq}`, split
 * from the right since a session id may itself contain ':'. Undefined when
 * it is not one.
 */
export function parseLastEventId(s: string | undefined): Position | undefined {
  if (typeof s !== 'string') return undefined;
  const b = s.lastIndexOf(':');
  if (b <= 0) return undefined;
  const a = s.lastIndexOf(':', b - 1);
  if (a <= 0) return undefined;
  const session = s.slice(0, a);
  const e = s.slice(a + 1, b);
  const q = s.slice(b + 1);
  if (!COUNTER.test(e) || !COUNTER.test(q)) return undefined;
  const epoch = Number(e);
  const seq = Number(q);
  if (!Number.isSafeInteger(epoch) || !Number.isSafeInteger(seq)) return undefined;
  return Object.freeze({ session, epoch, seq });
}
