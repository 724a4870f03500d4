import type { UnitKind } from '../aep/lifecycle.js';
import type { SpanKindOf } from './span-contexts.js';
import type { Attrs, AttrValue } from './span-record.js';

/*
 * The span builder's memory as plain JSON, for the start-up snapshot: the open
 * units and the bounded lookups that let later events find them, in columns
 * (parsing arrays of strings is several times faster than arrays of pairs).
 * Span contexts are stored once each and referenced by index; `sampled` is
 * not stored (it is the sampler's decision for the trace id, taken again on
 * load, exactly as a replay of the log would).
 */

/** One open unit, as saved. */
export interface UnitState {
  readonly key: string;
  readonly kind: UnitKind;
  readonly session: string;
  /** index into `ctx` */
  readonly ctx: number;
  readonly parent?: string;
  readonly name: string;
  readonly start: number;
  readonly startKnown: boolean;
  readonly last: number;
  readonly attributes: Attrs;
  readonly events: { name: string; timeMs: number; attributes: Attrs }[];
  readonly dropped: number;
  /** [traceId, spanId, attributes] */
  readonly links: [string, string, Attrs][];
  readonly status: { code: 'unset' | 'ok' | 'error'; message?: string };
}

/** `keys[i]` maps to `values[i]`, oldest first */
export type Columns<V> = [keys: string[], values: V[]];

export interface BuilderState {
  /** span contexts, each once, as three columns: trace id, span id, kind letter (`r` `t` `c` `d`, `m` a model call's chat span) */
  readonly ctx: [traceIds: string[], spanIds: string[], kinds: string];
  /** oldest first */
  readonly units: UnitState[];
  /** event id → index into ctx */
  readonly eventCtx: Columns<number>;
  /** session → its last run's ctx index */
  readonly lastRun: Columns<number>;
  /** child session → its delegation's ctx index */
  readonly delegatedBy: Columns<number>;
  /** run key → its latest model call's chat span ctx index (absent in a snapshot written before chat spans) */
  readonly lastChat?: Columns<number>;
  /** session → its last event time (ms) */
  readonly sessionLast: Columns<number>;
  /** keys of units already closed, oldest first */
  readonly closed: string[];
}

export const KIND_LETTER: Readonly<Record<SpanKindOf, string>> = { run: 'r', tool: 't', card: 'c', delegation: 'd', chat: 'm' };
export const LETTER_KIND: Readonly<Record<string, SpanKindOf>> = { r: 'run', t: 'tool', c: 'card', d: 'delegation', m: 'chat' };

/** A span context as the builder holds it. */
interface Ctx {
  readonly traceId: string;
  readonly spanId: string;
  readonly kind: SpanKindOf;
}

export interface UnitCapture extends Omit<UnitState, 'ctx' | 'links'> {
  readonly ctx: Ctx;
  readonly links: readonly { traceId: string; spanId: string; attributes: Attrs }[];
}

/** The builder's memory captured at one instant (see SpanBuilder.captureState). */
export interface BuilderCapture {
  readonly units: UnitCapture[];
  readonly eventCtx: [string[], Ctx[]];
  readonly lastRun: [string[], Ctx[]];
  readonly delegatedBy: [string[], Ctx[]];
  readonly lastChat: [string[], Ctx[]];
  readonly sessionLast: [string[], number[]];
  readonly closed: string[];
}

/**
 * A capture as the JSON text of a `BuilderState`, in slices of about `slice`
 * entries: a writer that awaits between slices never holds the event loop
 * for long, however many entries there are.
 */
export function* builderStateJson(c: BuilderCapture, slice = 4096): Generator<string> {
  const traces: string[] = [];
  const spans: string[] = [];
  const kinds: string[] = [];
  const index = new Map<Ctx, number>();
  const ref = (x: Ctx): number => {
    let i = index.get(x);
    if (i === undefined) {
      i = traces.push(x.traceId) - 1;
      spans.push(x.spanId);
      kinds.push(KIND_LETTER[x.kind]);
      index.set(x, i);
    }
    return i;
  };
  yield '{"units":';
  // units carry up to 512 events each: a few per piece
  yield* array(c.units, 16, (u) =>
    JSON.stringify({
      key: u.key,
      kind: u.kind,
      session: u.session,
      ctx: ref(u.ctx),
      ...(u.parent !== undefined ? { parent: u.parent } : {}),
      name: u.name,
      start: u.start,
      startKnown: u.startKnown,
      last: u.last,
      attributes: u.attributes,
      events: u.events,
      dropped: u.dropped,
      links: u.links.map((l) => [l.traceId, l.spanId, l.attributes]),
      status: u.status,
    }),
  );
  for (const name of ['eventCtx', 'lastRun', 'delegatedBy', 'lastChat'] as const) {
    yield `,"${name}":[`;
    yield* array(c[name][0], slice);
    yield ',';
    yield* array(c[name][1], slice, (x) => String(ref(x)));
    yield ']';
  }
  yield ',"sessionLast":[';
  yield* array(c.sessionLast[0], slice);
  yield ',';
  yield* array(c.sessionLast[1], slice);
  yield '],"closed":';
  yield* array(c.closed, slice);
  yield ',"ctx":[';
  yield* array(traces, slice);
  yield ',';
  yield* array(spans, slice);
  yield `,${JSON.stringify(kinds.join(''))}]}`;
}

/** A JSON array, `slice` elements per piece. */
function* array<T>(items: readonly T[], slice: number, each: (x: T) => string = (x) => JSON.stringify(x)): Generator<string> {
  yield '[';
  const step = Math.max(1, Math.floor(slice));
  for (let i = 0; i < items.length; i += step) {
    const part: string[] = [];
    for (let j = i; j < Math.min(items.length, i + step); j++) part.push(each(items[j]!));
    yield (i > 0 ? ',' : '') + part.join(',');
  }
  yield ']';
}

/** a unit's kind (a chat span is never a unit) */
const KINDS = new Set<string>(['run', 'tool', 'card', 'delegation'] satisfies UnitKind[]);
const STATUS = new Set<string>(['unset', 'ok', 'error']);

class Bad extends Error {
  override readonly name = 'InvalidBuilderState';
}

const fail = (what: string): never => {
  throw new Bad(`invalid span builder state: ${what}`);
};
const isStr = (v: unknown): v is string => typeof v === 'string';
const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

function attrValue(v: unknown): v is AttrValue {
  if (isStr(v) || isNum(v) || typeof v === 'boolean') return true;
  return Array.isArray(v) && v.every((x) => x === null || isStr(x) || isNum(x) || typeof x === 'boolean');
}

function attrs(v: unknown, what: string): Attrs {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) fail(what);
  for (const x of Object.values(v as object)) if (!attrValue(x)) fail(what);
  return v as Attrs;
}

function columns<T>(v: unknown, what: string, value: (x: unknown) => x is T): Columns<T> {
  if (!Array.isArray(v) || v.length !== 2 || !Array.isArray(v[0]) || !Array.isArray(v[1]) || v[0].length !== v[1].length) fail(what);
  const [keys, values] = v as [unknown[], unknown[]];
  for (const k of keys) if (!isStr(k)) fail(what);
  for (const x of values) if (!value(x)) fail(what);
  return v as Columns<T>;
}

/**
 * Check a parsed state field by field (hand-written rather than a schema
 * library: it walks up to tens of thousands of entries on the start-up path).
 * Throws on the first thing out of place; the caller then replays the log.
 */
export function checkBuilderState(v: unknown): BuilderState {
  if (typeof v !== 'object' || v === null) fail('not an object');
  const s = v as Record<string, unknown>;
  const c = s.ctx as unknown[];
  if (!Array.isArray(c) || c.length !== 3 || !Array.isArray(c[0]) || !Array.isArray(c[1]) || !isStr(c[2])) fail('ctx');
  const [traces, spans, kinds] = c as [unknown[], unknown[], string];
  const n = traces.length;
  if (spans.length !== n || kinds.length !== n || !/^[rtcdm]*$/.test(kinds) || !traces.every(isStr) || !spans.every(isStr)) fail('ctx columns');
  const ref = (x: unknown): x is number => Number.isInteger(x) && (x as number) >= 0 && (x as number) < n;
  if (!Array.isArray(s.units)) fail('units');
  for (const u of s.units as unknown[]) {
    if (typeof u !== 'object' || u === null) fail('unit');
    const w = u as Record<string, unknown>;
    if (!isStr(w.key) || !KINDS.has(w.kind as string) || !isStr(w.session) || !ref(w.ctx) || !isStr(w.name)) fail('unit identity');
    if (w.parent !== undefined && !isStr(w.parent)) fail('unit parent');
    if (!isNum(w.start) || !isNum(w.last) || typeof w.startKnown !== 'boolean' || !isNum(w.dropped)) fail('unit times');
    attrs(w.attributes, 'unit attributes');
    if (!Array.isArray(w.events)) fail('unit events');
    for (const e of w.events as unknown[]) {
      const x = e as Record<string, unknown>;
      if (typeof x !== 'object' || x === null || !isStr(x.name) || !isNum(x.timeMs)) fail('unit event');
      attrs(x.attributes, 'unit event attributes');
    }
    if (!Array.isArray(w.links)) fail('unit links');
    for (const l of w.links as unknown[]) if (!Array.isArray(l) || l.length !== 3 || !isStr(l[0]) || !isStr(l[1])) fail('unit link');
    for (const l of w.links as unknown[][]) attrs(l[2], 'unit link attributes');
    const st = w.status as Record<string, unknown>;
    if (typeof st !== 'object' || st === null || !STATUS.has(st.code as string) || (st.message !== undefined && !isStr(st.message))) fail('unit status');
  }
  columns(s.eventCtx, 'eventCtx', ref);
  columns(s.lastRun, 'lastRun', ref);
  columns(s.delegatedBy, 'delegatedBy', ref);
  if (s.lastChat !== undefined) columns(s.lastChat, 'lastChat', ref);
  columns(s.sessionLast, 'sessionLast', isNum);
  if (!Array.isArray(s.closed) || !(s.closed as unknown[]).every(isStr)) fail('closed');
  return s as unknown as BuilderState;
}
