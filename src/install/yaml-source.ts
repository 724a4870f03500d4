import { isMap, isPair, isScalar, isSeq, Parser, parseDocument, visit, type Document, type Pair, type YAMLMap } from 'yaml';
import { lineEnd, lineOf, type Lines } from './text-edits.js';

/**
 * Reading config.yaml for a byte-precise edit: the document (as PyYAML reads
 * it: YAML 1.1, duplicate keys, the last wins), its comments from the
 * concrete syntax tree (never text inside a quoted or block scalar), and the
 * offsets and columns of the nodes install touches.
 */

/** The comment ending every line install adds. */
export const MARK = '# added by hermes-aep';
/** The first line of a config.yaml install created; uninstall deletes the file when nothing else is left. */
export const CREATED_MARK = '# added by hermes-aep: this file did not exist';
/** Prefix of an original line install replaced (kept as a comment, restored by uninstall). */
export const WAS_PREFIX = '# replaced by hermes-aep: ';

export class ConfigRefused extends Error {
  override readonly name = 'ConfigRefused';
  constructor(reason: string) {
    super(`${reason}; config.yaml left untouched`);
  }
}

/** Hermes reads config.yaml with PyYAML: YAML 1.1, duplicate keys allowed (the last wins). */
export function load(text: string): Document {
  const doc = parseDocument(text, { version: '1.1', uniqueKeys: false, keepSourceTokens: true });
  const err = doc.errors[0];
  if (err) throw new ConfigRefused(`config.yaml is not valid YAML (line ${err.linePos?.[0]?.line ?? '?'}: ${err.message.split('\n')[0] ?? ''})`);
  if (doc.contents !== null && !isMap(doc.contents)) throw new ConfigRefused('config.yaml must be a mapping (key: value lines) at the top level');
  return doc;
}

export interface Comment {
  readonly offset: number;
  readonly source: string;
}

/** Every comment of the file, from the concrete syntax tree (never inside a quoted or block scalar). */
export function comments(text: string): { all: Comment[]; docEnd?: number } {
  const all: Comment[] = [];
  let docEnd: number | undefined;
  const seen = new Set<object>();
  const walk = (tok: unknown): void => {
    if (tok === null || typeof tok !== 'object' || seen.has(tok)) return;
    seen.add(tok);
    const t = tok as { type?: unknown; offset?: unknown; source?: unknown };
    if (t.type === 'comment' && typeof t.offset === 'number' && typeof t.source === 'string')
      all.push({ offset: t.offset, source: t.source.replace(/\r$/, '') });
    if (t.type === 'doc-end' && typeof t.offset === 'number') docEnd ??= t.offset;
    for (const v of Object.values(tok)) walk(v);
  };
  for (const tok of new Parser().parse(text)) walk(tok);
  return { all, ...(docEnd !== undefined ? { docEnd } : {}) };
}

export interface Marks {
  /** lines ending in MARK → the offset of that comment */
  readonly marked: Map<number, number>;
  readonly created: Set<number>;
  readonly was: Set<number>;
  readonly docEnd?: number;
}

export function marks(l: Lines): Marks {
  const { all, docEnd } = comments(l.text);
  const marked = new Map<number, number>();
  const created = new Set<number>();
  const was = new Set<number>();
  for (const c of all) {
    const line = lineOf(l, c.offset);
    if (c.source === MARK) marked.set(line, c.offset);
    else if (c.source === CREATED_MARK) created.add(line);
    else if (c.source.startsWith(WAS_PREFIX) && c.offset === l.starts[line]) was.add(line);
  }
  return { marked, created, was, ...(docEnd !== undefined ? { docEnd } : {}) };
}

export function keyName(pair: Pair): string | undefined {
  return isScalar(pair.key) && typeof pair.key.value === 'string' ? pair.key.value : undefined;
}

/** The last pair with this key (PyYAML's winner among duplicates). */
export function findPair(map: YAMLMap, key: string): Pair | undefined {
  return map.items.filter((p) => keyName(p) === key).pop();
}

export function range(node: unknown): [number, number, number] | undefined {
  const r = (node as { range?: [number, number, number] } | null)?.range;
  return Array.isArray(r) ? r : undefined;
}

/**
 * Where a node's own content ends. A block collection's range runs on over
 * trailing comments and the next line's indentation, so take its last item's.
 */
export function contentEnd(node: unknown): number {
  if ((isMap(node) || isSeq(node)) && !node.flow && node.items.length > 0) {
    const last = node.items[node.items.length - 1];
    if (isPair(last)) {
      const keyEnd = range(last.key)?.[1] ?? 0;
      return last.value !== null && range(last.value) ? Math.max(keyEnd, contentEnd(last.value)) : keyEnd;
    }
    return contentEnd(last);
  }
  return range(node)?.[1] ?? 0;
}

/** Some block scalar (| or >) runs to the very end of the text. */
export function endsInBlockScalar(doc: Document, end: number): boolean {
  let found = false;
  visit(doc, {
    Scalar(_, node) {
      if ((node.type === 'BLOCK_LITERAL' || node.type === 'BLOCK_FOLDED') && range(node)?.[1] === end) found = true;
    },
  });
  return found;
}

export function isNull(node: unknown): boolean {
  return node === null || node === undefined || (isScalar(node) && node.value === null);
}

/** Anchors some alias refers to: a node carrying one is shared, and adding to it would change the other place too. */
export function referencedAnchors(doc: Document): Set<string> {
  const out = new Set<string>();
  visit(doc, {
    Alias(_, node) {
      out.add(node.source);
    },
  });
  return out;
}

export function columnOf(l: Lines, offset: number): number {
  return offset - l.starts[lineOf(l, offset)]!;
}

/** The `-` of a block-sequence item (an item's range starts after it, and after any anchor or tag). */
export function dashOffset(text: string, itemStart: number): number {
  let p = itemStart - 1;
  for (let guard = 0; guard < 8 && p >= 0; guard++) {
    while (p >= 0 && /\s/.test(text[p]!)) p--;
    let s = p;
    while (s > 0 && !/\s/.test(text[s - 1]!)) s--;
    const word = text.slice(s, p + 1);
    if (word === '-') return p;
    if (!/^[&!]/.test(word)) break;
    p = s - 1;
  }
  return itemStart;
}

/** The key must open its line: install adds and comments out whole lines. */
export function keyLine(l: Lines, pair: Pair, what: string): number {
  const start = range(pair.key)?.[0];
  if (start === undefined) throw new ConfigRefused(`${what} has no position in config.yaml`);
  const line = lineOf(l, start);
  if (l.text.slice(l.starts[line], start).trim() !== '') throw new ConfigRefused(`${what} does not start its own line`);
  return line;
}

/** The lines a pair occupies (key line → the line its value ends on), when nothing but a comment follows it. */
export function pairLines(l: Lines, pair: Pair, what: string): [number, number] {
  const first = keyLine(l, pair, what);
  const end = range(pair.value)?.[1] ?? range(pair.key)![1];
  const last = lineOf(l, Math.max(end - 1, l.starts[first]!));
  const rest = l.text.slice(end, lineEnd(l, last));
  if (!/^[ \t]*(#.*)?$/.test(rest)) throw new ConfigRefused(`${what} shares its line with other content`);
  return [first, last];
}
