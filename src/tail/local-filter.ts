/**
 * The `attr-match` filter (AEP-0003 §6.1, §6.2) as `tail` applies it itself
 * when it reads the JSONL history (no daemon to filter for it), and checks it
 * before sending it to one (a typo fails here, with the same words, whichever
 * path runs). Fail closed: an unknown key or a malformed predicate is an
 * error, never a filter that matches everything.
 */
const FILTERABLE = new Set(['id', 'type', 'subject', 'source', 'agent', 'session', 'run', 'step', 'epoch', 'cause', 'severity', 'capture']);
/** core attributes that are carried, never filtered (AEP-0003 §6.2 rule 1) */
const NOT_FILTERABLE = new Set(['time', 'seq', 'aep', 'traceparent', 'data']);
const EXTENSION = /^[a-z0-9]{1,20}$/;
const LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical'];
const DEFAULTS: Record<string, unknown> = { severity: 'info', capture: 'metadata', epoch: 0 };
const TYPE_PATTERN = /^[^*]+\.\*$/;

export type LocalFilter = (event: Readonly<Record<string, unknown>>) => boolean;
type Check = (v: unknown) => boolean;

const isScalar = (v: unknown): v is string | number | boolean => typeof v === 'string' || typeof v === 'boolean' || Number.isInteger(v);
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function typeCheck(p: string): Check {
  if (TYPE_PATTERN.test(p)) {
    const prefix = p.slice(0, -1);
    return (v) => typeof v === 'string' && v.startsWith(prefix) && v.length > prefix.length;
  }
  return (v) => v === p;
}

function severityCheck(p: Record<string, unknown>): Check | string {
  const keys = Object.keys(p);
  if (keys.length === 0 || keys.some((k) => k !== 'gte' && k !== 'lte')) return 'severity: a level, a list of levels, or {"gte"|"lte": level}';
  const bound = (b: unknown, absent: number) => (b === undefined ? absent : typeof b === 'string' ? LEVELS.indexOf(b) : -1);
  const lo = bound(p['gte'], 0);
  const hi = bound(p['lte'], LEVELS.length - 1);
  if (lo < 0 || hi < 0) return `severity: bounds are one of ${LEVELS.join(', ')}`;
  return (v) => {
    const r = typeof v === 'string' ? LEVELS.indexOf(v) : -1;
    return r >= lo && r <= hi;
  };
}

function predicate(key: string, p: unknown): Check | string {
  if (key === 'severity' && isRecord(p)) return severityCheck(p);
  const items = Array.isArray(p) ? p : [p];
  if (Array.isArray(p) && p.length === 0) return `${key}: an empty list matches nothing`;
  if (!items.every(isScalar)) return `${key}: a string, integer or boolean, or a list of them`;
  if (key === 'type') {
    if (items.some((i) => typeof i !== 'string' || i === '*' || (i.includes('*') && !TYPE_PATTERN.test(i)))) {
      return 'type: exact types or "prefix.*" patterns';
    }
    const checks = (items as string[]).map(typeCheck);
    return (v) => checks.some((c) => c(v));
  }
  // patterns exist only on `type` (§6.2 rule 3): a star elsewhere is refused, never read as a literal
  if (items.some((i) => typeof i === 'string' && i.includes('*'))) return `${key}: patterns ("*") only on type`;
  return (v) => items.some((i) => i === v);
}

/** Compile a filter object; `{ error }` names the offending key, never its value. */
export function compileLocalFilter(json: unknown): { filter: LocalFilter } | { error: string } {
  if (!isRecord(json)) return { error: 'a filter is a JSON object' };
  const checks: [string, Check][] = [];
  for (const [key, p] of Object.entries(json)) {
    if (NOT_FILTERABLE.has(key)) return { error: `${key}: not filterable (AEP-0003 §6.2)` };
    if (!FILTERABLE.has(key) && !EXTENSION.test(key)) return { error: `${key}: not an attribute name` };
    const c = predicate(key, p);
    if (typeof c === 'string') return { error: c };
    checks.push([key, c]);
  }
  return {
    filter: (ev) =>
      checks.every(([key, c]) => {
        const v = Object.prototype.hasOwnProperty.call(ev, key) ? ev[key] : DEFAULTS[key];
        return v !== undefined && c(v);
      }),
  };
}
