/**
 * Byte-precise edits of a user's file: insertions and deletions at offsets of
 * the ORIGINAL text, so every byte nobody meant to touch stays as it was.
 * Lines end in `\n` or `\r\n`; a leading byte-order mark is not part of line 0.
 */

export interface Lines {
  readonly text: string;
  /** offset where each line starts; a text ending in a line break has a last, empty line at text.length */
  readonly starts: readonly number[];
  /** the line break new lines get: the file's own (its first), else `\n` */
  readonly eol: '\n' | '\r\n';
}

export function lines(text: string): Lines {
  const starts = [text.startsWith('\uFEFF') ? 1 : 0];
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
  const first = text.indexOf('\n');
  return { text, starts, eol: first > 0 && text[first - 1] === '\r' ? '\r\n' : '\n' };
}

/** The line holding `offset`. */
export function lineOf(l: Lines, offset: number): number {
  let lo = 0;
  let hi = l.starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (l.starts[mid]! <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** Where line `i`'s content ends (before its line break). */
export function lineEnd(l: Lines, i: number): number {
  const next = l.starts[i + 1];
  if (next === undefined) return l.text.length;
  return l.text[next - 2] === '\r' ? next - 2 : next - 1;
}

/** The start of the line after the one `offset` is on; `offset` itself when it already starts a line. */
export function lineStartAfter(l: Lines, offset: number): number {
  if (offset > 0 && l.text[offset - 1] === '\n') return offset;
  const nl = l.text.indexOf('\n', offset);
  return nl === -1 ? l.text.length : nl + 1;
}

/**
 * The bytes a set of whole lines occupies, with their line breaks. A run of
 * lines that ends the file without a final line break takes the break BEFORE
 * it instead: inserting lines at the end of such a file adds "\nline…", and
 * removing them takes exactly that back.
 */
export function lineSpans(l: Lines, set: Iterable<number>): [number, number][] {
  const sorted = [...new Set(set)].sort((a, b) => a - b);
  const out: [number, number][] = [];
  for (let k = 0; k < sorted.length;) {
    const a = sorted[k]!;
    let b = a;
    while (sorted[k + 1] === b + 1) b = sorted[++k]!;
    k++;
    const next = l.starts[b + 1];
    if (next !== undefined) out.push([l.starts[a]!, next]);
    else if (a === 0) out.push([l.starts[0]!, l.text.length]);
    else {
      const br = l.starts[a]! - 1;
      out.push([l.text[br - 1] === '\r' ? br - 1 : br, l.text.length]);
    }
  }
  return out;
}

export interface LineInsert {
  /** a line start, or text.length */
  readonly at: number;
  readonly lines: readonly string[];
  /** among inserts at the same offset, lower first */
  readonly order: number;
}

export interface TextInsert {
  readonly at: number;
  readonly text: string;
}

/** Apply insertions (whole lines and inline text); offsets refer to the original text. */
export function applyInserts(l: Lines, lineInserts: readonly LineInsert[], textInserts: readonly TextInsert[] = []): string {
  const groups = new Map<number, LineInsert[]>();
  for (const ins of lineInserts) groups.set(ins.at, [...(groups.get(ins.at) ?? []), ins]);
  // at one offset, whole lines go first: an inline insert at a line start belongs to the line that follows them
  const pieces: { at: number; text: string; rank: number }[] = textInserts.map((t) => ({ at: t.at, text: t.text, rank: 1 }));
  for (const [at, group] of groups) {
    const all = [...group].sort((a, b) => a.order - b.order).flatMap((g) => g.lines);
    if (all.length === 0) continue;
    const atEofWithoutBreak = at === l.text.length && at > l.starts[0]! && !l.text.endsWith('\n');
    pieces.push({ at, text: atEofWithoutBreak ? l.eol + all.join(l.eol) : all.map((s) => s + l.eol).join(''), rank: 0 });
  }
  pieces.sort((a, b) => a.at - b.at || a.rank - b.rank);
  let out = '';
  let pos = 0;
  for (const p of pieces) {
    out += l.text.slice(pos, p.at) + p.text;
    pos = p.at;
  }
  return out + l.text.slice(pos);
}

/** Delete ranges of the original text; overlapping or touching ranges merge. */
export function applyDeletes(text: string, ranges: readonly (readonly [number, number])[]): string {
  const sorted = ranges.filter(([a, b]) => b > a).sort((x, y) => x[0] - y[0]);
  let out = '';
  let pos = 0;
  for (const [from, to] of sorted) {
    if (to <= pos) continue;
    out += text.slice(pos, Math.max(pos, from));
    pos = Math.max(pos, to);
  }
  return out + text.slice(pos);
}
