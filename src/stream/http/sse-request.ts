import { isCaptureLevel } from '../../capture/levels.js';
import { compileFilter } from '../attr-match.js';
import type { SubscriptionSpec } from '../hub-types.js';
import { parseFrom, parseLastEventId } from '../resume-from.js';

export type SseRequest = { readonly ok: true; readonly spec: SubscriptionSpec } | { readonly ok: false; readonly detail: string };

const one = (v: unknown): string | undefined | null => (v === undefined ? undefined : typeof v === 'string' ? v : null);

function json(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/**
 * A `GET /stream` request's subscription (AEP-0003 §3.3 rule 1): `filter`
 * (attr-match JSON, §6), `capture` (a ceiling, §6.4), `from` (a JSON array
 * of positions, or `all`, §5), `live=0` (replay only); without `from`, the
 * `Last-Event-ID` header is the resume position (§3.3 rule 3). Any malformed
 * member refuses the whole request (fail closed, never match-all).
 */
export function readSseRequest(query: Record<string, unknown>, lastEventId: string | string[] | undefined): SseRequest {
  const filterText = one(query['filter']);
  const capture = one(query['capture']);
  const fromText = one(query['from']);
  const live = one(query['live']);
  if (filterText === null || capture === null || fromText === null || live === null) return { ok: false, detail: 'each parameter may be given once' };
  let filter: SubscriptionSpec['filter'] = () => true;
  if (filterText !== undefined) {
    const parsed = json(filterText);
    if (!parsed.ok) return { ok: false, detail: 'filter is not valid JSON' };
    const compiled = compileFilter(parsed.value);
    if (!compiled.ok) return { ok: false, detail: `filter: ${compiled.detail}` };
    filter = compiled.filter;
  }
  if (capture !== undefined && !isCaptureLevel(capture)) return { ok: false, detail: 'capture must be one of none, metadata, redacted, full' };
  let from: SubscriptionSpec['from'];
  if (fromText !== undefined) {
    const parsed = fromText === 'all' ? { ok: true as const, value: 'all' } : json(fromText);
    if (!parsed.ok) return { ok: false, detail: 'from is neither `all` nor valid JSON' };
    const f = parseFrom(parsed.value);
    if (!f.ok) return { ok: false, detail: `from: ${f.detail}` };
    from = f.from;
  } else if (lastEventId !== undefined) {
    const header = Array.isArray(lastEventId) ? lastEventId[0] : lastEventId;
    const p = parseLastEventId(header);
    if (!p) return { ok: false, detail: 'Last-Event-ID must be {session}:{epoch}:{seq}' };
    from = [p];
  }
  if (live !== undefined && !['0', '1', 'false', 'true'].includes(live)) return { ok: false, detail: 'live must be 0 or 1' };
  return {
    ok: true,
    spec: {
      filter,
      ...(capture !== undefined && isCaptureLevel(capture) ? { ceiling: capture } : {}),
      ...(from !== undefined ? { from } : {}),
      live: live !== '0' && live !== 'false',
    },
  };
}
