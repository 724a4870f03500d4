import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { ValidateFunction } from 'ajv/dist/2020.js';
import { loadAjv } from '../util/lazy-modules.js';
import { findPackageRoot } from '../util/package-root.js';
import { wireOf, type Origin, type WireEvent } from '../aep/wire.js';

/** The AEP schemas shipped with the package (`schemas/`, the published JSON Schema 2020-12 set). */
const SCHEMAS = path.join(findPackageRoot() ?? '.', 'schemas');

interface Validators {
  readonly envelope: ValidateFunction;
  readonly payloads: ReadonlyMap<string, ValidateFunction>;
}

let compiled: Validators | undefined;

/**
 * Compiled on first use, not at start (about a hundred milliseconds for the
 * whole set): a daemon nobody ingests into never pays it.
 */
function validators(): Validators {
  if (compiled) return compiled;
  const { Ajv2020, addFormats } = loadAjv();
  const ajv = new Ajv2020({ strict: false, allErrors: false });
  addFormats(ajv);
  ajv.addKeyword('x-aep-capture');
  const load = (p: string) => JSON.parse(readFileSync(p, 'utf8')) as Record<string, unknown>;
  const envelope = ajv.compile(load(path.join(SCHEMAS, 'aep-event.schema.json')));
  const payloads = new Map<string, ValidateFunction>();
  for (const dir of ['types', 'x-hermes']) {
    for (const f of readdirSync(path.join(SCHEMAS, dir))) {
      if (f.endsWith('.schema.json')) payloads.set(f.slice(0, -'.schema.json'.length), ajv.compile(load(path.join(SCHEMAS, dir, f))));
    }
  }
  return (compiled = { envelope, payloads });
}

export type EnvelopeCheck = { readonly ok: true; readonly wire: WireEvent } | { readonly ok: false; readonly detail: string };

/** A validator's first complaint as a path and a rule: never the value (an event is content). */
function firstError(where: string, v: ValidateFunction): string {
  const e = v.errors?.[0];
  if (!e) return `${where} is invalid`;
  const at = e.instancePath === '' ? where : `${where}${e.instancePath}`;
  return `${at} ${e.message ?? 'is invalid'}`;
}

/**
 * One ingested event checked against AEP-0001 §5 (the envelope schema: the
 * required attributes, the session/seq rules of §5.2, extension attribute
 * names and values, no nulls) and, for a registered type, its payload schema
 * (AEP-0002 §5). Unknown vendor types (`x.*`) are checked by the envelope
 * alone. `line` is the event's one-line JSON as received: the bytes kept.
 */
export function checkEnvelope(value: unknown, line: string, origin: Origin = 'ingest'): EnvelopeCheck {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { ok: false, detail: 'an event must be a JSON object' };
  const v = validators();
  if (!v.envelope(value)) return { ok: false, detail: firstError('envelope', v.envelope) };
  const ev = value as Record<string, unknown>;
  const type = ev['type'] as string;
  const payload = v.payloads.get(type);
  if (payload && ev['data'] !== undefined && !payload(ev['data'])) return { ok: false, detail: firstError(`${type} data`, payload) };
  return { ok: true, wire: wireOf(deepFreeze(ev), line, origin) };
}

function deepFreeze<T>(x: T): T {
  if (typeof x === 'object' && x !== null && !Object.isFrozen(x)) {
    Object.freeze(x);
    for (const k of Object.keys(x)) deepFreeze((x as Record<string, unknown>)[k]);
  }
  return x;
}

/**
 * The bytes to keep for an event parsed from `text`: the text itself when it
 * is already one line (surrounding blanks trimmed), else its compact
 * re-serialization (an SSE `data:` line and a JSONL line cannot hold a line break).
 */
export function lineOf(text: string, parsed: unknown): string {
  const t = text.trim();
  return /[\r\n]/.test(t) ? JSON.stringify(parsed) : t;
}
