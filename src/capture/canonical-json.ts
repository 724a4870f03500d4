/**
 * Canonical JSON and content digests (AEP-0003 §9.3): `*_digest` fields let two
 * parties correlate content without holding it, so the serialization must be
 * stable regardless of object key order.
 */
import { createHash } from 'node:crypto';

function canonicalize(value: unknown, out: string[]): void {
  if (value === null || typeof value !== 'object') {
    // Primitives serialize exactly as JSON.stringify does (NaN/Infinity -> null).
    // Top-level undefined/functions/symbols have no JSON form; emit `null` so the
    // result is always a valid JSON text and the digest is always defined.
    const s = JSON.stringify(value) as string | undefined;
    out.push(s ?? 'null');
    return;
  }
  const withToJson = value as { toJSON?: unknown };
  if (typeof withToJson.toJSON === 'function') {
    canonicalize((withToJson.toJSON as () => unknown).call(value), out);
    return;
  }
  if (Array.isArray(value)) {
    out.push('[');
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out.push(',');
      const item: unknown = value[i];
      // Like JSON.stringify: array holes / undefined / functions become null.
      if (item === undefined || typeof item === 'function' || typeof item === 'symbol') {
        out.push('null');
      } else {
        canonicalize(item, out);
      }
    }
    out.push(']');
    return;
  }
  const record = value as Record<string, unknown>;
  // Default sort compares UTF-16 code units, which is the required ordering.
  const keys = Object.keys(record).sort();
  out.push('{');
  let first = true;
  for (const key of keys) {
    const member = record[key];
    // Like JSON.stringify: members with no JSON form are dropped.
    if (member === undefined || typeof member === 'function' || typeof member === 'symbol') {
      continue;
    }
    if (!first) out.push(',');
    first = false;
    out.push(JSON.stringify(key), ':');
    canonicalize(member, out);
  }
  out.push('}');
}

/**
 * Deterministic JSON text: object keys sorted by UTF-16 code unit at every
 * depth, arrays in order, primitives as `JSON.stringify`, and `undefined`
 * members dropped, so equal content always yields equal bytes.
 */
export function canonicalJson(value: unknown): string {
  const out: string[] = [];
  canonicalize(value, out);
  return out.join('');
}

/**
 * SHA-256 over the canonical JSON of the ORIGINAL content, truncated to the
 * first 16 bytes (32 hex chars), per AEP-0003 §9.3; compute it before any
 * redaction so distinct secrets never collide on the redaction marker.
 */
export function contentDigest(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value), 'utf8').digest('hex').slice(0, 32);
}
