import { scanJson, type ScanLimits } from '../../transport/json-scan.js';
import { httpRefusal, type HttpRefusal } from '../../core/errors.js';
import { checkEnvelope, lineOf } from '../envelope-check.js';
import type { OwnSourceCheck } from '../own-source.js';
import type { WireEvent } from '../../aep/wire.js';

/** Why a batch is refused whole (AEP-0003 §3.2.3): the status and a content-free reply. */
export interface IngestRefusal extends HttpRefusal {
  /** the refusal is a source naming this daemon's own emitter (counted where /healthz shows it) */
  readonly ownSource?: true;
}

export interface IngestLimits extends ScanLimits {
  readonly maxEvents: number;
  /** whether a source names this daemon's own emitter (compared as URIs, own-source.ts) */
  readonly ownSource: OwnSourceCheck;
}

const invalid = (n: number, detail: string): IngestRefusal => httpRefusal('invalid-event', `line ${n}: ${detail}`);
const tooMany = (detail: string): IngestRefusal => httpRefusal('too-large', detail);

/** The pieces of a body to check: the whole of a JSON body, each non-blank line of an NDJSON one (order kept). */
function piecesOf(body: Buffer, ndjson: boolean): { n: number; bytes: Buffer }[] {
  if (!ndjson) return [{ n: 1, bytes: body }];
  const out: { n: number; bytes: Buffer }[] = [];
  let start = 0;
  let n = 0;
  while (start <= body.length) {
    let end = body.indexOf(0x0a, start);
    if (end < 0) end = body.length;
    n++;
    const piece = body.subarray(start, end);
    if (piece.toString('latin1').trim() !== '') out.push({ n, bytes: piece });
    start = end + 1;
  }
  return out;
}

/**
 * One ingest body (AEP-0003 §3.2) to wire events, all or nothing: each piece
 * is scanned against the node and depth caps before it is parsed, then
 * checked as an envelope (AEP-0001 §5); its bytes are kept as received.
 */
export function parseIngestBody(body: Buffer, ndjson: boolean, limits: IngestLimits): { ok: true; wires: WireEvent[] } | { ok: false; refusal: IngestRefusal } {
  const pieces = piecesOf(body, ndjson);
  if (pieces.length === 0) return { ok: false, refusal: invalid(1, 'the body holds no event') };
  if (pieces.length > limits.maxEvents) return { ok: false, refusal: tooMany(`more than ${limits.maxEvents} events in one request`) };
  let nodes = 0;
  const wires: WireEvent[] = [];
  for (const { n, bytes } of pieces) {
    const scan = scanJson(bytes, { maxNodes: limits.maxNodes - nodes, maxDepth: limits.maxDepth });
    if (!scan.ok) {
      if (scan.reason === 'too-many-nodes') return { ok: false, refusal: tooMany('the body holds more JSON values and keys than AEP_MAX_BODY_NODES') };
      return { ok: false, refusal: invalid(n, `nests deeper than ${limits.maxDepth} levels`) };
    }
    nodes += scan.nodes;
    let text = bytes.toString('utf8');
    if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return { ok: false, refusal: invalid(n, 'not valid JSON') };
    }
    const checked = checkEnvelope(value, lineOf(text, value));
    if (!checked.ok) return { ok: false, refusal: invalid(n, checked.detail) };
    if (limits.ownSource(checked.wire.source)) return { ok: false, refusal: { ...invalid(n, "source is this daemon's own emitter"), ownSource: true } };
    wires.push(checked.wire);
  }
  return { ok: true, wires };
}
