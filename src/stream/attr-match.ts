import { isSeverity, severityRank, type WireEvent } from '../aep/wire.js';
import type { EventFilter } from './hub-types.js';

/** The filterable core attributes (AEP-0003 §6.2 rule 1). */
const FILTERABLE = new Set(['id', 'type', 'subject', 'source', 'agent', 'session', 'run', 'step', 'epoch', 'cause', 'severity', 'capture']);
/** Core attributes that are never filterable and never legal extension names (AEP-0001 §5.1, §5.4). */
const CORE = new Set([...FILTERABLE, 'aep', 'time', 'seq', 'traceparent', 'data']);
/** A legal extension attribute name (AEP-0001 §5.4). */
const EXTENSION_NAME = /^[a-z0-9]{1,20}$/;

export type FilterCompile = { readonly ok: true; readonly filter: EventFilter } | { readonly ok: false; readonly detail: string };

type Scalar = string | number | boolean;
type Test = (value: unknown) => boolean;

const isScalar = (x: unknown): x is Scalar => typeof x === 'string' || typeof x === 'boolean' || (typeof x === 'number' && Number.isInteger(x));
const isRecord = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

/** The attribute value a predicate sees: the AEP-0001 §5.1 defaults for `epoch`, `severity`, `capture` (§6.2 rule 5). */
function attribute(w: WireEvent, key: string): unknown {
  switch (key) {
    case 'epoch':
      return w.epoch;
    case 'severity':
      return w.severity;
    case 'capture':
      return w.capture;
    default:
      return Object.prototype.hasOwnProperty.call(w.event, key) ? w.event[key] : undefined;
  }
}

/** One type pattern (§6.2 rule 3): exact, or `prefix.*` matching types strictly below `prefix.`. */
function typePattern(p: unknown): Test | string {
  if (typeof p !== 'string' || p.length === 0) return 'a type pattern must be a non-empty string';
  if (p.endsWith('.*')) {
    const prefix = p.slice(0, -1);
    if (prefix.length < 2 || prefix.includes('*')) return 'a type pattern must be "prefix.*" with a non-empty prefix';
    return (v) => typeof v === 'string' && v.length > prefix.length && v.startsWith(prefix);
  }
  if (p.includes('*')) return 'a type pattern may only end in ".*"';
  return (v) => v === p;
}

function severityCmp(p: Record<string, unknown>): Test | string {
  const keys = Object.keys(p);
  if (keys.length === 0 || keys.some((k) => k !== 'gte' && k !== 'lte')) return 'a severity comparison takes only "gte" and/or "lte"';
  const gte = p['gte'];
  const lte = p['lte'];
  if ((gte !== undefined && !isSeverity(gte)) || (lte !== undefined && !isSeverity(lte))) return 'a severity bound must be a severity level';
  const lo = gte === undefined ? -Infinity : severityRank(gte);
  const hi = lte === undefined ? Infinity : severityRank(lte);
  return (v) => isSeverity(v) && severityRank(v) >= lo && severityRank(v) <= hi;
}

/** Equality with no coercion (§6.2 rule 2): scalars only, so `===` is exact JSON equality. */
function scalarTest(p: unknown): Test | string {
  if (!isScalar(p)) return 'a predicate value must be a string, integer or boolean';
  if (typeof p === 'string' && p.endsWith('*')) return 'patterns apply only to "type"';
  return (v) => v === p;
}

function predicate(key: string, p: unknown): Test | string {
  if (key === 'severity' && isRecord(p)) return severityCmp(p);
  const one = key === 'type' ? typePattern : scalarTest;
  if (Array.isArray(p)) {
    if (p.length === 0) return 'an inclusion array must not be empty';
    const tests: Test[] = [];
    for (const x of p) {
      const t = one(x);
      if (typeof t === 'string') return t;
      tests.push(t);
    }
    return (v) => tests.some((t) => t(v));
  }
  return one(p);
}

/**
 * Compile an `attr-match` filter (AEP-0003 §6.1, §6.2). Fails closed: any
 * key that is not a filterable core attribute nor a legal extension name, and
 * any malformed predicate, refuses the whole filter. `detail` names the key,
 * never a value.
 */
export function compileFilter(json: unknown): FilterCompile {
  if (!isRecord(json)) return { ok: false, detail: 'a filter must be a JSON object' };
  const tests: [string, Test][] = [];
  for (const [key, p] of Object.entries(json)) {
    if (!FILTERABLE.has(key) && (CORE.has(key) || !EXTENSION_NAME.test(key))) return { ok: false, detail: `filter key "${safeKey(key)}" is not filterable` };
    const t = predicate(key, p);
    if (typeof t === 'string') return { ok: false, detail: `filter key "${safeKey(key)}": ${t}` };
    tests.push([key, t]);
  }
  if (tests.length === 0) return { ok: true, filter: () => true };
  return {
    ok: true,
    filter: (w) => {
      for (const [key, t] of tests) {
        const v = attribute(w, key);
        if (v === undefined || !t(v)) return false;
      }
      return true;
    },
  };
}

/** A key echoed in a refusal: short and printable, so a detail can never carry a payload. */
function safeKey(k: string): string {
  const s = k.replace(/[^\x20-\x7e]/g, '?');
  return s.length > 32 ? `${s.slice(0, 32)}...` : s.replace(/"/g, "'");
}
