import { isCaptureLevel } from '../../core/capture-levels.js';
import type { SubscriptionSpec } from '../hub-types.js';
import type { SubscriptionParsers } from './deps.js';

const matchAll = () => true;

export type QueryResult = { readonly ok: true; readonly spec: SubscriptionSpec } | { readonly ok: false; readonly detail: string };

function json(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/**
 * The subscription of `GET /stream` (AEP-0003 §3.3.1, §6, §6.4, §7): `filter`
 * (attr-match JSON; absent = everything), `capture` (ceiling), `from` (a JSON
 * position array or `all`, taking precedence over `Last-Event-ID`), `live=0`.
 * Fails closed; details never quote the values.
 */
export function subscriptionOf(query: URLSearchParams, lastEventId: string | undefined, parsers: SubscriptionParsers): QueryResult {
  let filter = matchAll as SubscriptionSpec['filter'];
  const filterText = query.get('filter');
  if (filterText !== null) {
    const parsed = json(filterText);
    if (!parsed.ok) return { ok: false, detail: 'filter is not valid JSON' };
    const compiled = parsers.compileFilter(parsed.value);
    if (!compiled.ok) return { ok: false, detail: `filter: ${compiled.detail}` };
    filter = compiled.filter;
  }
  const capture = query.get('capture');
  if (capture !== null && !isCaptureLevel(capture)) return { ok: false, detail: 'capture must be none, metadata, redacted or full' };
  let from: SubscriptionSpec['from'];
  const fromText = query.get('from');
  if (fromText !== null) {
    const parsed = fromText === 'all' ? { ok: true as const, value: 'all' } : json(fromText);
    if (!parsed.ok) return { ok: false, detail: 'from is not valid JSON' };
    const positions = parsers.parseFrom(parsed.value);
    if (!positions.ok) return { ok: false, detail: `from: ${positions.detail}` };
    from = positions.from;
  } else if (lastEventId !== undefined && lastEventId !== '') {
    const position = parsers.parseLastEventId(lastEventId);
    if (!position) return { ok: false, detail: 'Last-Event-ID must be {session}:{epoch}:{seq}' };
    from = [position];
  }
  const liveText = query.get('live');
  if (liveText !== null && liveText !== '0' && liveText !== '1') return { ok: false, detail: 'live must be 0 or 1' };
  return {
    ok: true,
    spec: { filter, ...(capture !== null ? { ceiling: capture } : {}), ...(from !== undefined ? { from } : {}), live: liveText !== '0' },
  };
}
