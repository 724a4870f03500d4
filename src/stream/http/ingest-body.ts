import { nestsDeeperThan } from '../../daemon/json-depth.js';
import { checkEnvelope, lineOf } from '../envelope-check.js';
import type { WireEvent } from '../wire.js';

/** How deep an ingested event may nest (the hook path's bound: every walk after it stays safe). */
export const INGEST_MAX_DEPTH = 64;

export type IngestParse =
  | { readonly ok: true; readonly events: readonly WireEvent[] }
  | { readonly ok: false; readonly status: 400 | 413; readonly error: string; readonly detail: string };

const invalid = (detail: string): IngestParse => ({ ok: false, status: 400, error: 'invalid-event', detail });

/**
 * The events of one `POST /events` body (AEP-0003 §3.2): one JSON event
 * (`application/json`) or one per line (`application/x-ndjson`, blank lines
 * ignored, order kept). Every event is checked before any is taken: the
 * first failing line is named (1-based) and the whole batch refused. Each
 * event keeps the bytes it arrived with (`lineOf`).
 */
export function parseIngestBody(
  body: string,
  kind: 'json' | 'ndjson',
  o: { readonly maxEvents: number; readonly ownSourcePrefix: string },
): IngestParse {
  const texts = kind === 'json' ? [body] : body.split('\n');
  const events: WireEvent[] = [];
  for (let i = 0; i < texts.length; i++) {
    const text = texts[i]!;
    if (kind === 'ndjson' && text.trim() === '') continue;
    if (events.length >= o.maxEvents) return { ok: false, status: 413, error: 'too-many-events', detail: `at most ${o.maxEvents} events per request (AEP_INGEST_MAX_EVENTS)` };
    const where = kind === 'json' ? 'body' : `line ${i + 1}`;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return invalid(`${where}: not valid JSON`);
    }
    if (nestsDeeperThan(parsed, INGEST_MAX_DEPTH)) return invalid(`${where}: nests deeper than ${INGEST_MAX_DEPTH} levels`);
    const checked = checkEnvelope(parsed, lineOf(text, parsed));
    if (!checked.ok) return invalid(`${where}: ${checked.detail}`);
    if (checked.wire.source.startsWith(o.ownSourcePrefix)) return invalid(`${where}: source belongs to this daemon's own emitter (hermes); it is never taken from outside`);
    events.push(checked.wire);
  }
  if (events.length === 0) return invalid('no event in the body');
  return { ok: true, events };
}

/** The `AEP-Version` request header (AEP-0003 §3.2 rule 2): whether this endpoint speaks its major version. */
export function versionSupported(header: string | string[] | undefined): boolean {
  const v = Array.isArray(header) ? header[0] : header;
  return typeof v === 'string' && /^0\.\d+$/.test(v.trim());
}
