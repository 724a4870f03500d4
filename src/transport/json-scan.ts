/**
 * One cheap pass over a JSON body's bytes BEFORE it is parsed: counts nodes
 * and tracks nesting, so a body that would make `JSON.parse` (and every walk
 * after it: validation, digests) build millions of values is refused after
 * scanning only as far as its cap. Linear in the bytes; long strings are
 * skipped with a native byte search.
 *
 * A node is every JSON value AND every object key (each string, number,
 * literal, object, array). The scan does not validate the JSON: `JSON.parse`
 * does that afterwards; whatever the bytes, the counts only ever stop early.
 */

export interface ScanLimits {
  /** refuse a body with more nodes than this */
  readonly maxNodes: number;
  /** refuse a body whose objects/arrays nest deeper than this */
  readonly maxDepth: number;
}

export type ScanResult =
  | { readonly ok: true; readonly nodes: number; readonly maxDepth: number; readonly suspectKeys: boolean }
  | { readonly ok: false; readonly reason: 'too-deep' | 'too-many-nodes' };

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** `__proto__` and `constructor`: a key with exactly these bytes (or any escape) makes the parse strip them. */
const PROTO = Buffer.from('__proto__');
const CONSTRUCTOR = Buffer.from('constructor');
/** the longest escaped spelling of `constructor` (`\uXXXX` per character) */
const MAX_ESCAPED_KEY = 6 * CONSTRUCTOR.length;

/** Bytes that can continue a number or a literal (`true`, `-1.5e+3`): skipped as one token. */
const TOKEN_TAIL = new Uint8Array(256);
for (const c of '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.+-') TOKEN_TAIL[c.charCodeAt(0)] = 1;

function sameBytes(b: Uint8Array, start: number, end: number, word: Buffer): boolean {
  if (end - start !== word.length) return false;
  for (let k = 0; k < word.length; k++) if (b[start + k] !== word[k]) return false;
  return true;
}

function hasByte(b: Uint8Array, start: number, end: number, byte: number): boolean {
  for (let k = start; k < end; k++) if (b[k] === byte) return true;
  return false;
}

/** Whether the string closing at `from - 1` is an object key: the next byte past JSON whitespace is `:`. */
function isKey(b: Buffer, from: number): boolean {
  let k = from;
  while (k < b.length && (b[k] === 0x20 || b[k] === 0x0a || b[k] === 0x0d || b[k] === 0x09)) k++;
  return b[k] === 0x3a;
}

/** Index of the quote closing the string that opens at `open`, or -1 when it never closes. */
function stringEnd(b: Buffer, open: number): number {
  let from = open + 1;
  for (;;) {
    const q = b.indexOf(QUOTE, from);
    if (q < 0) return -1;
    // escaped when preceded by an odd run of backslashes (each run is walked once: linear)
    let k = q - 1;
    while (k > open && b[k] === BACKSLASH) k--;
    if ((q - 1 - k) % 2 === 0) return q;
    from = q + 1;
  }
}

export function scanJson(bytes: Uint8Array, limits: ScanLimits): ScanResult {
  const b = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = b.length;
  let nodes = 0;
  let depth = 0;
  let deepest = 0;
  let suspectKeys = false;
  let i = 0;
  while (i < n) {
    const c = b[i]!;
    if (c === QUOTE) {
      const end = stringEnd(b, i);
      if (end < 0) break; // unterminated: JSON.parse refuses it
      const len = end - i - 1;
      // only a KEY can become `__proto__`/`constructor` (a value never does): strings in value position are skipped
      if (!suspectKeys && len >= PROTO.length && len <= MAX_ESCAPED_KEY && isKey(b, end + 1)) {
        suspectKeys = sameBytes(b, i + 1, end, PROTO) || sameBytes(b, i + 1, end, CONSTRUCTOR) || hasByte(b, i + 1, end, BACKSLASH);
      }
      if (++nodes > limits.maxNodes) return { ok: false, reason: 'too-many-nodes' };
      i = end + 1;
      continue;
    }
    if (c === 0x7b || c === 0x5b) {
      // { [
      if (++depth > limits.maxDepth) return { ok: false, reason: 'too-deep' };
      if (depth > deepest) deepest = depth;
      if (++nodes > limits.maxNodes) return { ok: false, reason: 'too-many-nodes' };
    } else if (c === 0x7d || c === 0x5d) {
      // } ]
      depth--;
    } else if (TOKEN_TAIL[c] === 1) {
      // a number or a literal: one node, however long
      if (++nodes > limits.maxNodes) return { ok: false, reason: 'too-many-nodes' };
      while (i + 1 < n && TOKEN_TAIL[b[i + 1]!] === 1) i++;
    }
    // whitespace , : and stray bytes count nothing (JSON.parse refuses the stray ones)
    i++;
  }
  return { ok: true, nodes, maxDepth: deepest, suspectKeys };
}
